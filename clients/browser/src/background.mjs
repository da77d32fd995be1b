// The extension's service worker: holds the lists in the WebAssembly check core, keeps each
// current with the publish/sync protocol, and checks every navigation, subframe and download
// before it loads. Only browser plumbing lives here: every rule (verdicts, which downloads a
// sync needs, their checks, when to poll) is the core's (crates/wasm). Nothing about a
// visited URL ever leaves the browser: the only requests made are for the lists themselves.

import { Core } from "./core.mjs";
import * as config from "./config.mjs";
import * as store from "./store.mjs";

/** Everything the worker holds; rebuilt from storage whenever the worker starts. */
const state = {
  core: null,
  settings: { lists: [], update_seconds: 300, trust: "", managed: [] },
  /** list URL -> {handle, info, etag, etagVersion, failures, nextAt, error, syncedAt} */
  lists: new Map(),
  /** Counts this session: navigations warned, subframes blocked, downloads cancelled. */
  counts: { navigations: 0, subframes: 0, downloads: 0 },
  /** Session DNR rules already installed: "kind url" -> rule id. */
  rules: new Map(),
  nextRuleId: 1,
  timer: null,
  /** tab id -> the listed URL last warned in it (counts each warning once). */
  warned: new Map(),
};

// Listeners are registered synchronously (a woken worker gets the event that woke it); each
// waits for the lists to be loaded first.
chrome.webNavigation.onBeforeNavigate.addListener((d) => guard(d, "before"));
chrome.webNavigation.onCommitted.addListener((d) => guard(d, "committed"));
chrome.downloads.onCreated.addListener((item) => checkDownload(item));
chrome.alarms.onAlarm.addListener(() => ready.then(pollDue));
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "managed" || (area === "local" && changes.config)) ready.then(reconfigure);
});
chrome.runtime.onMessage.addListener((message, sender, reply) => {
  ready.then(() => answer(message, sender)).then(reply, (e) => reply({ error: String(e) }));
  return true;
});

const ready = start().catch((error) => {
  console.error(`phishbloom: the service worker could not start: ${error.stack || error}`);
});

/** Loads the core, the settings and the stored lists, then schedules the polls. */
async function start() {
  const wasm = await (await fetch(chrome.runtime.getURL("phishbloom.wasm"))).arrayBuffer();
  state.core = await Core.load(wasm);
  const session = await chrome.storage.session.get(["counts", "passed", "nextWarning"]);
  Object.assign(state.counts, session.counts || {});
  state.core.setPassed(session.passed || []);
  const rules = await chrome.declarativeNetRequest.getSessionRules();
  for (const rule of rules) {
    state.nextRuleId = Math.max(state.nextRuleId, rule.id + 1);
    if (rule.condition.regexFilter) state.rules.set(ruleKey(rule), rule.id);
  }
  // A policy that answers late is applied when it arrives (reconfigure).
  state.settings = await config.load(500);
  if (config.policyArrived) {
    config.policyArrived.then((policy) => {
      if (Object.keys(policy).length) ready.then(reconfigure);
    });
  }
  const schedule = (await chrome.storage.local.get("schedule")).schedule || {};
  for (const record of await store.all()) {
    if (!state.settings.lists.includes(record.url)) {
      await store.remove(record.url);
      continue;
    }
    try {
      const handle = state.core.loadList(record.url, record.bytes);
      state.lists.set(record.url, {
        ...record,
        bytes: undefined,
        handle,
        info: state.core.info(handle),
        ...(schedule[record.url] || {}),
      });
    } catch (error) {
      // A damaged stored copy is dropped: the next sync downloads the whole file.
      await store.remove(record.url);
    }
  }
  for (const url of state.settings.lists) {
    if (!state.lists.has(url)) state.lists.set(url, { handle: 0, failures: 0, nextAt: 0 });
  }
  chrome.alarms.create("poll", { periodInMinutes: Math.max(0.5, state.settings.update_seconds / 60) });
  badge();
  const stored = [...state.lists.values()].filter((l) => l.handle).length;
  console.info(`phishbloom: ${state.lists.size} lists, ${stored} stored`);
  pollDue();
}

/** Applies changed settings: lists dropped are forgotten, new ones polled at once. */
async function reconfigure() {
  state.settings = await config.load();
  for (const [url, list] of state.lists) {
    if (!state.settings.lists.includes(url)) {
      if (list.handle) state.core.dropList(list.handle);
      state.lists.delete(url);
      await store.remove(url);
    }
  }
  for (const url of state.settings.lists) {
    if (!state.lists.has(url)) state.lists.set(url, { handle: 0, failures: 0, nextAt: 0 });
  }
  badge();
  pollDue();
}

// ---------------------------------------------------------------------------------------------
// Keeping lists current

/** Polls every list that is due, then sets a timer for the next one. */
async function pollDue() {
  clearTimeout(state.timer);
  const now = Date.now();
  const due = [...state.lists.entries()].filter(([, list]) => !list.busy && list.nextAt <= now);
  await Promise.all(due.map(([url, list]) => poll(url, list)));
  const next = Math.min(...[...state.lists.values()].map((l) => l.nextAt), Infinity);
  if (Number.isFinite(next)) {
    state.timer = setTimeout(pollDue, Math.max(50, next - Date.now()));
  }
}

/** One sync of one list, then its next poll time; failures back off. */
async function poll(url, list) {
  list.busy = true;
  let minInterval = 0;
  try {
    minInterval = await sync(url, list);
    list.failures = 0;
    list.error = "";
  } catch (error) {
    list.failures = (list.failures || 0) + 1;
    list.error = String(error && error.message ? error.message : error);
    console.warn(`phishbloom: ${url}: ${list.error}`);
  } finally {
    list.busy = false;
  }
  const wait = state.core.nextPoll(state.settings.update_seconds, minInterval, list.failures);
  list.nextAt = Date.now() + wait * 1000;
  list.checkedAt = Date.now();
  await saveSchedule();
  badge();
}

/** Fetches one list's index and whatever brings the held copy to it; the min interval. */
async function sync(url, list) {
  const indexUrl = `${url}/index.json`;
  const headers = {};
  // Conditional only while the held copy is the version the ETag's index was read at.
  if (list.handle && list.etag && list.info && list.etagVersion === list.info.version) {
    headers["If-None-Match"] = list.etag;
  }
  const response = await fetch(indexUrl, { cache: "no-store", headers, credentials: "omit" });
  if (response.status === 304) return list.minInterval || 0;
  if (!response.ok) throw new Error(`${indexUrl}: HTTP ${response.status}`);
  const index = new Uint8Array(await response.arrayBuffer());
  const core = state.core;
  const { session, plan } = core.syncBegin(list.handle, indexUrl, index, state.settings.trust);
  try {
    for (let next = core.syncNext(session); next; next = core.syncNext(session)) {
      let bytes;
      try {
        bytes = await download(new URL(next.path, `${url}/`).href, next.bytes);
      } catch (error) {
        core.syncFailed(session, error.message || error);
        continue;
      }
      core.syncGive(session, bytes);
    }
    const { handle, summary } = core.syncFinish(session, list.handle);
    list.handle = handle;
    list.info = summary.info;
    list.etag = response.headers.get("ETag") || "";
    list.etagVersion = summary.info.version;
    list.minInterval = plan.min_interval;
    list.via = summary.via;
    if (summary.changed) {
      list.syncedAt = Date.now();
      await store.put({
        url,
        bytes: core.toBytes(handle),
        etag: list.etag,
        etagVersion: list.etagVersion,
        syncedAt: list.syncedAt,
      });
      console.info(`phishbloom: ${url}: version ${summary.version} (${summary.via})`);
      // An entry removed from the list takes its session rules with it.
      await removeRulesNoLongerWarned();
    }
    return plan.min_interval;
  } finally {
    core.syncEnd(session);
  }
}

/** The bytes at `href`, refusing more than `limit` (what the index promised). */
async function download(href, limit) {
  const response = await fetch(href, { cache: "no-store", credentials: "omit" });
  if (!response.ok) throw new Error(`${href}: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes.length > limit) throw new Error(`${href}: more bytes than the index promised`);
  return bytes;
}

/** Persists when each list is due, so a restarted worker keeps the schedule and back-off. */
async function saveSchedule() {
  const schedule = {};
  for (const [url, list] of state.lists) {
    schedule[url] = {
      nextAt: list.nextAt,
      failures: list.failures,
      error: list.error || "",
      etag: list.etag || "",
      etagVersion: list.etagVersion || 0,
      minInterval: list.minInterval || 0,
      checkedAt: list.checkedAt || 0,
    };
  }
  await chrome.storage.local.set({ schedule });
}

// ---------------------------------------------------------------------------------------------
// Checking navigations, subframes and downloads

/** The extension's own pages are never checked. */
function ours(url) {
  return url.startsWith(chrome.runtime.getURL(""));
}

/** Checks one navigation event; warns, blocks and counts. */
async function guard(details, phase) {
  if (ours(details.url) || details.tabId < 0) return;
  await ready;
  const warning = state.core.warning(details.url);
  if (!warning) return;
  // A prerendered page is not shown (yet): it is only redirected by the rule if activated.
  const prerender =
    details.documentLifecycle === "prerender" || details.frameType === "prerender";
  if (details.frameId !== 0 && !prerender) {
    await installRule("sub_frame", details.url);
    if (phase === "committed") {
      state.counts.subframes += 1;
      await saveCounts();
      // The block rule came after the frame's request: load the frame again, into it.
      chrome.scripting
        .executeScript({
          target: { tabId: details.tabId, frameIds: [details.frameId] },
          func: () => location.reload(),
        })
        .catch(() => {});
    }
    return;
  }
  const id = await recordWarning(warning);
  await installRule("main_frame", details.url, id);
  if (prerender) return;
  // Counted once per tab and URL: at the start, or at the commit a redirect (or a lost race
  // with a navigation already under way) led to.
  if (state.warned.get(details.tabId) !== details.url) {
    state.warned.set(details.tabId, details.url);
    state.counts.navigations += 1;
    await saveCounts();
  }
  await chrome.tabs.update(details.tabId, { url: warningPage(id) }).catch(() => {});
}

/** Cancels a download whose URL (or final URL) is listed. */
async function checkDownload(item) {
  await ready;
  for (const url of new Set([item.url, item.finalUrl].filter(Boolean))) {
    if (state.core.warning(url)) {
      await chrome.downloads.cancel(item.id).catch(() => {});
      state.counts.downloads += 1;
      await saveCounts();
      return;
    }
  }
}

/** Keeps a warning for the warning page; its id. */
async function recordWarning(warning) {
  const { nextWarning = 1 } = await chrome.storage.session.get("nextWarning");
  await chrome.storage.session.set({ nextWarning: nextWarning + 1, [`w${nextWarning}`]: warning });
  return nextWarning;
}

/** The warning page for warning `id`. */
function warningPage(id) {
  return chrome.runtime.getURL(`warning.html?id=${id}`);
}

/** The key of a rule in `state.rules`. */
function ruleKey(rule) {
  return `${rule.condition.resourceTypes[0]} ${rule.condition.regexFilter}`;
}

/** Escapes a string for an RE2 regular expression. */
function escapeRegex(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Installs a session rule for one URL found listed: a main frame is redirected to the
 * warning page, a subframe blocked. Closes the race where the original load wins against
 * tabs.update. Rules are per URL, never the list itself (rule counts are capped).
 */
async function installRule(type, url, warningId) {
  let target;
  try {
    const parsed = new URL(url);
    parsed.hash = "";
    target = parsed.href;
  } catch {
    return;
  }
  // RE2 rules are limited in size; a longer URL is still caught by the navigation guards.
  if (target.length > 1000) return;
  const regexFilter = `^${escapeRegex(target)}$`;
  const key = `${type} ${regexFilter}`;
  if (state.rules.has(key)) return;
  const id = state.nextRuleId++;
  state.rules.set(key, id);
  const action =
    type === "main_frame"
      ? { type: "redirect", redirect: { extensionPath: `/warning.html?id=${warningId}` } }
      : { type: "block" };
  await chrome.declarativeNetRequest
    .updateSessionRules({
      addRules: [{ id, priority: 1, action, condition: { regexFilter, resourceTypes: [type] } }],
    })
    .catch((error) => {
      state.rules.delete(key);
      console.warn(`phishbloom: rule for a listed URL not installed: ${error.message}`);
    });
}

/** Saves the counts for this browser session and shows them. */
async function saveCounts() {
  await chrome.storage.session.set({ counts: state.counts });
  badge();
}

// ---------------------------------------------------------------------------------------------
// The warning page, the options page and the badge

/** Answers the extension's pages. */
async function answer(message, sender) {
  switch (message && message.type) {
    case "warning":
      return (await chrome.storage.session.get(`w${message.id}`))[`w${message.id}`] || null;
    case "continue": {
      // "Continue anyway": the entry that decided is passed for this browser session.
      const warning = (await chrome.storage.session.get(`w${message.id}`))[`w${message.id}`];
      if (!warning) return { ok: false };
      const { passed = [] } = await chrome.storage.session.get("passed");
      passed.push({ list: warning.list.name, entry: warning.verdict.entry });
      await chrome.storage.session.set({ passed });
      state.core.setPassed(passed);
      await removeRulesNoLongerWarned();
      if (sender.tab) await chrome.tabs.update(sender.tab.id, { url: warning.url });
      return { ok: true };
    }
    case "safety":
      if (sender.tab) await chrome.tabs.update(sender.tab.id, { url: "chrome://newtab/" });
      return { ok: true };
    case "status":
      return status();
    case "sync":
      for (const list of state.lists.values()) list.nextAt = 0;
      await pollDue();
      return status();
    default:
      return { error: "unknown message" };
  }
}

/** Drops the session rules of URLs the core no longer warns about. */
async function removeRulesNoLongerWarned() {
  const rules = await chrome.declarativeNetRequest.getSessionRules();
  const remove = [];
  for (const rule of rules) {
    const pattern = rule.condition.regexFilter || "";
    const url = pattern.slice(1, -1).replace(/\\(.)/g, "$1");
    if (!state.core.warning(url)) {
      remove.push(rule.id);
      state.rules.delete(ruleKey(rule));
    }
  }
  if (remove.length) await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: remove });
}

/** What the options page shows. */
function status() {
  return {
    settings: state.settings,
    counts: state.counts,
    lists: [...state.lists.entries()].map(([url, l]) => ({
      url,
      info: l.info || null,
      error: l.error || "",
      failures: l.failures || 0,
      via: l.via || "",
      checkedAt: l.checkedAt || 0,
      nextAt: l.nextAt || 0,
    })),
    memory: state.core.memoryBytes(),
  };
}

/** The toolbar badge: the list version, or "!" after a failed update, and a summary title. */
function badge() {
  const lists = [...state.lists.values()];
  const failing = lists.filter((l) => l.error);
  const loaded = lists.filter((l) => l.info);
  let text = "";
  let color = "#2e7d32";
  if (failing.length) {
    text = "!";
    color = "#c62828";
  } else if (loaded.length === 1) {
    text = `v${loaded[0].info.version}`.slice(0, 4);
  } else if (loaded.length > 1) {
    text = `${loaded.length}`;
  } else if (lists.length) {
    text = "…";
    color = "#757575";
  }
  const lines = [...state.lists.entries()].map(([url, l]) =>
    l.info
      ? `${l.info.name} v${l.info.version}, ${l.info.entries} entries${l.error ? `; update failed: ${l.error}` : ""}`
      : `${url}: ${l.error ? `update failed: ${l.error}` : "not yet downloaded"}`,
  );
  const c = state.counts;
  lines.push(`blocked: ${c.navigations} pages, ${c.subframes} frames, ${c.downloads} downloads`);
  chrome.action.setBadgeText({ text }).catch(() => {});
  chrome.action.setBadgeBackgroundColor({ color }).catch(() => {});
  chrome.action.setTitle({ title: `phishbloom\n${lines.join("\n")}` }).catch(() => {});
}
