// Optional: a copy button for a key or link shown once. The page works without it.
for (const button of document.querySelectorAll("button[data-copy]")) {
  const input = document.getElementById(button.dataset.copy);
  if (!input || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener("click", async () => {
    await navigator.clipboard.writeText(input.value);
    button.textContent = "Copied";
  });
}

// A refused form: focus goes to its first field in error, or to the form's own error.
const firstInvalid = document.querySelector("[aria-invalid='true'], #form-error, #page-error");
if (firstInvalid) {
  if (!firstInvalid.matches("input, select, textarea")) firstInvalid.tabIndex = -1;
  firstInvalid.focus();
}

// A job's page follows the job until it ends, without a reload (the server side is
// /portal/jobs/:id/status). Without JavaScript the page shows the state it was loaded with.
const job = document.querySelector("[data-job-poll]");
if (job?.dataset.jobPoll) {
  const poll = async () => {
    try {
      const res = await fetch(job.dataset.jobPoll, {
        headers: { accept: "application/json" },
        credentials: "same-origin",
      });
      if (!res.ok) return;
      const state = await res.json();
      const doc = new DOMParser().parseFromString(state.html, "text/html");
      job.replaceChildren(...doc.body.childNodes);
      if (state.running) setTimeout(poll, 1000);
      else job.dataset.jobDone = "true";
    } catch {
      setTimeout(poll, 3000);
    }
  };
  setTimeout(poll, 1000);
}

// The reseller panel's live events: an EventSource on the page's own stream, each event added
// as text (never as markup) at the top of the list.
const stream = document.querySelector("[data-event-stream]");
if (stream?.dataset.eventStream && "EventSource" in window) {
  const list = document.getElementById("stream-events");
  const source = new EventSource(stream.dataset.eventStream);
  stream.textContent = "Connecting…";
  source.addEventListener("ready", () => {
    stream.textContent = "Listening: new events appear below as they are raised.";
  });
  source.addEventListener("delivery", (e) => {
    const d = JSON.parse(e.data);
    const item = document.createElement("li");
    const head = document.createElement("p");
    const name = document.createElement("strong");
    name.textContent = d.event;
    head.append(name, ` ${new Date().toISOString().slice(0, 19).replace("T", " ")} UTC · ${d.id}`);
    const body = document.createElement("pre");
    try {
      body.textContent = JSON.stringify(JSON.parse(d.body), null, 2);
    } catch {
      body.textContent = d.body;
    }
    item.append(head, body);
    list?.prepend(item);
  });
  source.onerror = () => {
    stream.textContent = "The stream is interrupted; reconnecting…";
  };
}
