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

// Below 600 px (pages.css) each table row reads as a card: every cell is labelled with its
// column's heading here. Without JavaScript the cards show the values alone, in column order.
for (const table of document.querySelectorAll(".table-wrap table")) {
  const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
  for (const row of table.querySelectorAll("tbody tr")) {
    for (const [i, cell] of [...row.children].entries()) if (heads[i]) cell.dataset.label = heads[i];
  }
}

// Below 600 px the main menu folds behind a Menu button (pages.css shows the button only there and
// only once this script has made it); without JavaScript the menu stays open as a wrapped list.
const mainMenu = document.querySelector("header.top nav");
if (mainMenu) {
  mainMenu.id ||= "main-menu";
  const toggle = document.createElement("button");
  toggle.type = "button";
  toggle.className = "menu-button";
  toggle.textContent = "Menu";
  toggle.setAttribute("aria-expanded", "false");
  toggle.setAttribute("aria-controls", mainMenu.id);
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    mainMenu.classList.toggle("open", open);
  });
  mainMenu.before(toggle);
  document.documentElement.classList.add("has-menu-button");
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
      // A refusal ends the following (the job is not the session's); a failure in passing does not.
      if (!res.ok) {
        if (res.status === 429 || res.status >= 500) setTimeout(poll, 3000);
        return;
      }
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
  // Ended by the server for good (signed out, or no longer permitted): not reconnected.
  source.addEventListener("ended", (e) => {
    source.close();
    const { reason } = JSON.parse(e.data);
    stream.textContent =
      reason === "signed-out"
        ? "Your session has ended; sign in again to follow events."
        : "You may no longer follow this account's events.";
  });
  source.onerror = () => {
    stream.textContent = "The stream is interrupted; reconnecting…";
  };
}
