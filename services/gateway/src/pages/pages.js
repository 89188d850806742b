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
