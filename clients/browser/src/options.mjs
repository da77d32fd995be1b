// phishbloom's options page: edits the user's settings (storage.local "config"; fields an
// administrator's policy sets are shown and locked) and shows each list's state.

const $ = (id) => document.getElementById(id);

async function fill() {
  const status = await chrome.runtime.sendMessage({ type: "status" });
  const { settings } = status;
  $("lists").value = settings.lists.join("\n");
  $("update").value = settings.update_seconds;
  $("trust").value = settings.trust || "";
  $("managed").hidden = settings.managed.length === 0;
  $("lists").disabled = settings.managed.includes("lists");
  $("update").disabled = settings.managed.includes("update_seconds");
  $("trust").disabled = settings.managed.includes("trust");
  render(status);
}

function render(status) {
  const body = $("status").querySelector("tbody");
  body.replaceChildren(
    ...status.lists.map((list) => {
      const row = document.createElement("tr");
      const state = list.error
        ? `update failed: ${list.error}`
        : list.checkedAt
          ? `checked ${new Date(list.checkedAt).toLocaleTimeString()}`
          : "waiting";
      for (const text of [
        list.info ? list.info.name : list.url,
        list.info ? list.info.version : "",
        list.info ? list.info.entries : "",
        state,
      ]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.append(cell);
      }
      return row;
    }),
  );
  const c = status.counts;
  $("counts").textContent =
    `Blocked this session: ${c.navigations} pages, ${c.subframes} frames, ${c.downloads} downloads.`;
}

$("save").addEventListener("click", async () => {
  const config = {
    lists: $("lists").value.split("\n").map((l) => l.trim()).filter(Boolean),
    update_seconds: Number($("update").value) || 300,
    trust: $("trust").value.trim(),
  };
  await chrome.storage.local.set({ config });
  $("saved").textContent = "saved";
});

$("sync").addEventListener("click", async () => {
  render(await chrome.runtime.sendMessage({ type: "sync" }));
});

fill();
