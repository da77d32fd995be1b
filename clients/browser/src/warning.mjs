// phishbloom's warning page: asks the service worker for the warning it recorded (by the id in
// this page's address) and shows it; its buttons go back to safety or pass the entry.
//
// Only ever acts as the top-level page of its tab: framed (by a web page hoping to trick a
// click on "continue"), it shows nothing and its buttons do nothing. The manifest's
// `frame-ancestors 'none'` already refuses the frame, and the worker only takes "continue"
// from this page in a tab's top frame.

const id = new URLSearchParams(location.search).get("id");
const framed = window.top !== window.self;

/** A duration in words ("3 hours"). */
function age(seconds) {
  const units = [["day", 86400], ["hour", 3600], ["minute", 60]];
  for (const [name, size] of units) {
    const n = Math.floor(seconds / size);
    if (n >= 1) return `${n} ${name}${n === 1 ? "" : "s"}`;
  }
  return "less than a minute";
}

async function show() {
  const warning = await chrome.runtime.sendMessage({ type: "warning", id });
  if (!warning) return;
  const { verdict, list } = warning;
  document.getElementById("url").textContent = warning.url;
  const categories = (verdict.categories || []).join(", ");
  document.getElementById("categories").textContent =
    (verdict.categories_exact === false ? "possibly " : "") + (categories || "dangerous");
  document.getElementById("entry").textContent = `${verdict.entry} (${verdict.entry_kind})`;
  const made = list.created ? `, made ${age(Date.now() / 1000 - list.created)} ago` : "";
  document.getElementById("list").textContent =
    `${list.name} version ${list.version} (${list.entries} entries${made})`;
}

if (framed) {
  for (const button of document.querySelectorAll("button")) button.disabled = true;
} else {
  document.getElementById("safety").addEventListener("click", () =>
    chrome.runtime.sendMessage({ type: "safety", id }),
  );
  document.getElementById("continue").addEventListener("click", () =>
    chrome.runtime.sendMessage({ type: "continue", id }),
  );
  show();
}
