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
  /** The compiled core, instantiated again after a trap (see `recover`). */
  module: null,
  /** The rebuild of a core that trapped, while one runs. */
  recovering: null,
  /** When the core last trapped (ms since the epoch; 0: never this worker). */
  coreFailedAt: 0,
  settings: { lists: [], update_seconds: 300, trust: "", managed: [], provisional: true },
  /**
   * list URL -> {handle, info, key, etag, etagVersion, expires, failures, nextAt, error,
   * syncedAt, trusted, trustedFrom}: `trusted` is the key the list's signing key was handed
   * over to (by a signed rotation) from the configured key `trustedFrom` (see `sync`).
   */
  lists: new Map(),
  /** Counts this session: navigations warned, subframes blocked, downloads cancelled. */
  counts: { navigations: 0, subframes: 0, downloads: 0 },
  /** Session DNR rules already installed: "kind url" -> rule id. */
  rules: new Map(),
  nextRuleId: 1,
  timer: null,
  /** tab id -> the listed URL last warned in it (counts each warning once). */
  warned: new Map(),
  /** Warnings recorded by this worker, by id (also in storage.session, which outlives it). */
  warnings: new Map(),
  /** The last settings change applied, or being applied (they apply one at a time). */
  reconfiguring: Promise.resolve(),
  /** The last "continue anyway" recorded, or being recorded (one at a time). */
  passing: Promise.resolve(),
};

/** The extension's own origin, and the warning page (never a dynamic URL: see manifest). */
const BASE = `chrome-extension://${chrome.runtime.id}/`;
const WARNING_PAGE = `${BASE}warning.html`;

/** Refuses more than this many bytes of one index.json. */
const INDEX_LIMIT = 8 << 20;

// Listeners are registered synchronously (a woken worker gets the event that woke it); each
// waits for the lists to be loaded first.
chrome.webNavigation.onBeforeNavigate.addListener((d) => guard(d, "before"));
chrome.webNavigation.onCommitted.addListener((d) => guard(d, "committed"));
// A prerendered page that is activated makes no request (its redirect rule never fires) and
// no new navigation: its tab's URL changes, and that is checked again here.
chrome.tabs.onUpdated.addListener((tabId, change) => {
  if (change.url) guard({ tabId, frameId: 0, url: change.url }, "shown");
});
chrome.webNavigation.onTabReplaced.addListener(({ tabId }) => {
  chrome.tabs.get(tabId).then(
    (tab) => tab.url && guard({ tabId, frameId: 0, url: tab.url }, "shown"),
    () => {},
  );
});
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

/**
 * Loads the core, the settings and the stored lists, then schedules the polls. A policy that
 * has not answered within 500 ms leaves the settings provisional (its cached answer): the
 * stored lists still check navigations, but nothing is synced or forgotten until it answers
 * (`reconfigure` then applies it).
 */
async function start() {
  const wasm = await (await fetch(chrome.runtime.getURL("phishbloom.wasm"))).arrayBuffer();
  state.module = await WebAssembly.compile(wasm);
  state.core = await newCore();
  const session = await chrome.storage.session.get(["counts"]);
  Object.assign(state.counts, session.counts || {});
  const rules = await chrome.declarativeNetRequest.getSessionRules();
  for (const rule of rules) {
    state.nextRuleId = Math.max(state.nextRuleId, rule.id + 1);
    if (rule.condition.regexFilter) state.rules.set(ruleKey(rule), rule.id);
  }
  state.settings = await config.load(500);
  const schedule = (await chrome.storage.local.get("schedule")).schedule || {};
  for (const record of await store.all()) {
    // Copies the settings do not want are forgotten by `adopt`, once the policy is known;
    // meanwhile they are only left unused (or used, while provisional, if verified alike).
    if (!config.usable(record.key, state.settings.trust)) continue;
    if (!state.settings.provisional && !state.settings.lists.includes(record.url)) continue;
    try {
      const handle = state.core.loadList(record.url, record.bytes);
      state.lists.set(record.url, {
        failures: 0,
        nextAt: 0,
        ...record,
        ...(schedule[record.url] || {}),
        bytes: undefined,
        handle,
        info: state.core.info(handle),
      });
    } catch (error) {
      if (error instanceof WebAssembly.RuntimeError) throw error;
      // A damaged stored copy is dropped: the next sync downloads the whole file.
      console.warn(`phishbloom: ${record.url}: the stored copy is damaged: ${error.message}`);
      await store.remove(record.url);
    }
  }
  for (const url of state.settings.lists) {
    if (!state.lists.has(url)) {
      state.lists.set(url, { ...unheld(), ...(schedule[url] || {}), handle: 0, info: null });
    }
  }
  chrome.alarms.create("poll", { periodInMinutes: Math.max(0.5, state.settings.update_seconds / 60) });
  const stored = [...state.lists.values()].filter((l) => l.handle).length;
  console.info(
    `phishbloom: ${state.lists.size} lists, ${stored} stored` +
      (state.settings.provisional ? "; waiting for the policy before any update" : ""),
  );
  if (state.settings.provisional) {
    // `reconfigure` waits for the policy's answer, then applies it (and polls).
    ready.then(reconfigure);
    badge();
    return;
  }
  await adopt();
  badge();
  pollDue();
}

/** A list entry with no copy held (the next poll downloads the whole file at once). */
function unheld() {
  return { handle: 0, info: null, key: "", etag: "", etagVersion: 0, failures: 0, nextAt: 0 };
}

/** Applies changed settings (once the policy has answered), one change at a time. */
function reconfigure() {
  state.reconfiguring = state.reconfiguring.catch(() => {}).then(async () => {
    const waited = state.settings.provisional;
    const settings = await config.load();
    if (waited) console.info("phishbloom: the policy answered; updates start");
    state.settings = settings;
    await adopt();
    badge();
    pollDue();
  });
  return state.reconfiguring.catch((error) => {
    console.error(`phishbloom: the settings could not be applied: ${error.stack || error}`);
  });
}

/**
 * Makes the lists held what the (answered) settings say: lists dropped are forgotten (also in
 * storage), a copy the trusted key did not verify is dropped with its ETag (the next sync
 * fetches the whole file under that key), and new lists are polled at once.
 */
async function adopt() {
  const { lists, trust } = state.settings;
  for (const [url, list] of state.lists) {
    if (!lists.includes(url)) {
      if (list.handle) state.core.dropList(list.handle);
      state.lists.delete(url);
      await store.remove(url);
    } else if (list.handle && !config.usable(list.key, trust)) {
      console.info(`phishbloom: ${url}: the trusted key changed; the copy is downloaded again`);
      state.core.dropList(list.handle);
      Object.assign(list, unheld());
      await store.remove(url);
    }
  }
  for (const url of lists) {
    if (!state.lists.has(url)) state.lists.set(url, unheld());
  }
  // Stored copies of lists no longer followed (or never loaded: another key verified them).
  for (const url of await store.urls()) {
    const list = state.lists.get(url);
    if (!list || !list.handle) await store.remove(url);
  }
  await removeRulesNoLongerWarned();
  await saveSchedule();
}

/** A fresh core (its passes of this session set), reporting a trap to `recover`. */
async function newCore() {
  const core = await Core.load(state.module);
  core.onTrap = (error) => {
    console.error(`phishbloom: the check core failed: ${error.message}`);
    recover();
  };
  const { passed = [] } = await chrome.storage.session.get("passed");
  core.setPassed(passed);
  return core;
}

/**
 * Replaces a core that trapped (panic=abort: it cannot be used again) with a fresh one holding
 * the stored lists; syncs in progress are abandoned (they finish into nothing) and lists not
 * stored are downloaded again. The badge shows "!" for the rest of the worker's life.
 */
function recover() {
  if (!state.recovering) {
    state.coreFailedAt = Date.now();
    badge();
    state.recovering = (async () => {
      const records = new Map((await store.all()).map((r) => [r.url, r]));
      // A stored copy whose loading traps too is left out (and downloaded again).
      const skip = new Set();
      for (;;) {
        const core = await newCore();
        const handles = new Map();
        for (const [url, list] of state.lists) {
          const record = records.get(url);
          if (!record || !list.handle || skip.has(url)) continue;
          try {
            handles.set(url, core.loadList(url, record.bytes));
          } catch (error) {
            if (!(error instanceof WebAssembly.RuntimeError)) throw error;
            skip.add(url);
            break;
          }
        }
        if (core.failed) continue;
        for (const [url, list] of state.lists) {
          const handle = handles.get(url);
          Object.assign(list, handle ? { handle, info: core.info(handle) } : unheld());
        }
        state.core = core;
        break;
      }
      console.info("phishbloom: the check core was restarted from the stored lists");
    })()
      .catch((error) => console.error(`phishbloom: the check core could not restart: ${error}`))
      .finally(() => {
        state.recovering = null;
        badge();
        pollDue();
      });
  }
  return state.recovering;
}

/**
 * `f(core)` on the current core; after a trap, once more on the core that replaces it (a
 * check must not fail open because an earlier one broke the core).
 */
async function withCore(f) {
  if (state.recovering) await state.recovering;
  try {
    return f(state.core);
  } catch (error) {
    if (!(error instanceof WebAssembly.RuntimeError)) throw error;
    await recover();
    return f(state.core);
  }
}

// ---------------------------------------------------------------------------------------------
// Keeping lists current

/**
 * Polls every list that is due, then sets a timer for the next one. Nothing is polled while
 * the settings are provisional (the policy has not answered: its key and lists are unknown).
 */
async function pollDue() {
  clearTimeout(state.timer);
  if (state.settings.provisional || state.recovering) return;
  const now = Date.now();
  const due = [...state.lists.entries()].filter(([, list]) => !list.busy && list.nextAt <= now);
  await Promise.all(due.map(([url, list]) => poll(url, list)));
  const next = Math.min(...[...state.lists.values()].map((l) => l.nextAt), Infinity);
  if (Number.isFinite(next)) {
    clearTimeout(state.timer);
    state.timer = setTimeout(pollDue, Math.max(50, next - Date.now()));
  }
}

/** A sync whose list was dropped, replaced, or re-keyed while it ran: its result is unused. */
class Superseded extends Error {}

/** One sync of one list, then its next poll time; failures back off. */
async function poll(url, list) {
  list.busy = true;
  let minInterval = 0;
  let superseded = false;
  try {
    minInterval = await sync(url, list);
    list.failures = 0;
    list.error = "";
  } catch (error) {
    if (error instanceof Superseded) {
      superseded = true;
    } else {
      // Any refusal (a bad signature, a rollback, another list's index at this URL, a
      // download that fails its checks) keeps the copy held and backs off.
      list.failures = (list.failures || 0) + 1;
      list.error = String(error && error.message ? error.message : error);
      console.warn(`phishbloom: ${url}: ${list.error}`);
    }
  } finally {
    list.busy = false;
  }
  if (state.lists.get(url) !== list) return;
  if (superseded) {
    list.nextAt = 0;
  } else {
    const wait = state.core.nextPoll(state.settings.update_seconds, minInterval, list.failures);
    list.nextAt = Date.now() + wait * 1000;
  }
  list.checkedAt = Date.now();
  await saveSchedule();
  badge();
}

/** Fetches one list's index and whatever brings the held copy to it; the min interval. */
async function sync(url, list) {
  const indexUrl = `${url}/index.json`;
  // What the sync began with: if any of it changes meanwhile, the result is not used.
  const core = state.core;
  const handle = list.handle;
  const trust = state.settings.trust;
  const current = () =>
    state.lists.get(url) === list &&
    state.core === core &&
    list.handle === handle &&
    state.settings.trust === trust &&
    !core.failed;
  const headers = {};
  // Conditional only while the held copy is the version the ETag's index was read at.
  if (handle && list.etag && list.info && list.etagVersion === list.info.version) {
    headers["If-None-Match"] = list.etag;
  }
  // A list whose key was handed over (a signed rotation from the configured key) is verified
  // with the new key alone from then on: an index signed by the old key alone is refused.
  const root = config.keyOf(trust);
  const verifyWith = list.trusted && list.trustedFrom === root ? list.trusted : trust;
  const response = await fetch(indexUrl, { cache: "no-store", headers, credentials: "omit" });
  if (!current()) throw new Superseded();
  if (response.status === 304) {
    // Not modified is no excuse past the index's expiry: a replayed 304 cannot freeze the list.
    if (list.expires && Date.now() / 1000 >= list.expires) {
      const when = new Date(list.expires * 1000).toISOString();
      throw new Error(`${indexUrl}: the index expired at ${when}; the copy was kept as it was`);
    }
    return list.minInterval || 0;
  }
  if (!response.ok) throw new Error(`${indexUrl}: HTTP ${response.status}`);
  const index = await readAtMost(response, INDEX_LIMIT, indexUrl);
  if (!current()) throw new Superseded();
  const { session, plan } = core.syncBegin(handle, indexUrl, index, verifyWith);
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
    // The list may have been dropped (its handle perhaps reused), replaced or re-keyed while
    // the downloads ran; the core also refuses a handle that no longer holds the same list.
    if (!current()) throw new Superseded();
    const finished = core.syncFinish(session, handle);
    const summary = finished.summary;
    list.handle = finished.handle;
    list.info = summary.info;
    list.key = config.keyOf(trust);
    list.etag = response.headers.get("ETag") || "";
    list.etagVersion = summary.info.version;
    list.minInterval = plan.min_interval;
    list.expires = plan.expires || 0;
    list.via = summary.via;
    if (plan.trusted && plan.trusted !== list.trusted) {
      if (list.trusted) {
        console.info(`phishbloom: ${url}: its signing key was handed over; only the new key is trusted`);
      }
      list.trusted = plan.trusted;
      list.trustedFrom = root;
    }
    if (summary.changed) {
      list.syncedAt = Date.now();
      await store.put({
        url,
        bytes: core.toBytes(list.handle),
        key: list.key,
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
  return readAtMost(response, limit, href);
}

/**
 * A response's body, read as it streams in and given up (the rest never read) as soon as it
 * is longer than `limit` bytes.
 */
async function readAtMost(response, limit, href) {
  const tooLong = () => new Error(`${href}: more than the ${limit} bytes expected`);
  const declared = Number(response.headers.get("Content-Length"));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => {});
    throw tooLong();
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.length;
    if (length > limit) {
      await reader.cancel().catch(() => {});
      throw tooLong();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
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
      expires: list.expires || 0,
      checkedAt: list.checkedAt || 0,
      trusted: list.trusted || "",
      trustedFrom: list.trustedFrom || "",
    };
  }
  await chrome.storage.local.set({ schedule });
}

// ---------------------------------------------------------------------------------------------
// Checking navigations, subframes and downloads

/** The extension's own pages are never checked. */
function ours(url) {
  return url.startsWith(BASE) || url.startsWith(chrome.runtime.getURL(""));
}

/** The warning for a navigation to `url`, or null (see `withCore`). */
function warningFor(url) {
  return withCore((core) => core.warning(url));
}

/**
 * Checks one navigation event (`phase`: "before", "committed", or "shown" when a tab's URL
 * changed without one, as a prerendered page's activation does); warns, blocks and counts.
 */
async function guard(details, phase) {
  if (ours(details.url) || details.tabId < 0) return;
  await ready;
  // A URL this tab was already sent away from, seen again as the tab's URL: nothing to do.
  if (phase === "shown" && state.warned.get(details.tabId) === details.url) return;
  const warning = await warningFor(details.url);
  if (!warning) return;
  // A prerendered page is not shown (yet): it gets the rule, and its activation is checked
  // as a change of its tab's URL (tabs.onUpdated).
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
  const id = crypto.randomUUID();
  state.warnings.set(id, warning);
  const kept = chrome.storage.session.set({ [`w${id}`]: warning });
  if (prerender) {
    await Promise.all([kept, installRule("main_frame", details.url, id)]);
    return;
  }
  // The tab leaves first; the warning's storage, the rule and the count follow meanwhile.
  const shown = chrome.tabs.update(details.tabId, { url: warningPage(id) }).catch(() => {});
  const work = [shown, kept, installRule("main_frame", details.url, id)];
  // Counted once per tab and URL: at the start, or at the commit a redirect (or a lost race
  // with a navigation already under way) led to.
  if (state.warned.get(details.tabId) !== details.url) {
    state.warned.set(details.tabId, details.url);
    state.counts.navigations += 1;
    work.push(saveCounts());
  }
  await Promise.all(work);
}

/** Cancels a download whose URL (or final URL) is listed. */
async function checkDownload(item) {
  await ready;
  for (const url of new Set([item.url, item.finalUrl].filter(Boolean))) {
    if (await warningFor(url)) {
      await chrome.downloads.cancel(item.id).catch(() => {});
      state.counts.downloads += 1;
      await saveCounts();
      return;
    }
  }
}

/**
 * The warning page for warning `id` (a random UUID: a page cannot guess another's). Always
 * the extension's static URL, never a dynamic one.
 */
function warningPage(id) {
  return `${WARNING_PAGE}?id=${id}`;
}

/** The warning recorded as `id` (by this worker or an earlier one this session), or null. */
async function recordedWarning(id) {
  if (typeof id !== "string" || id === "") return null;
  if (state.warnings.has(id)) return state.warnings.get(id);
  return (await chrome.storage.session.get(`w${id}`))[`w${id}`] || null;
}

/**
 * Whether `sender` is the extension's own warning page for warning `id`, as the top-level
 * document of a tab: never a frame (a web page framing the warning page to trick a click on
 * "continue"), nor another page of the extension.
 */
function fromWarningPage(sender, id) {
  if (sender.id !== chrome.runtime.id || sender.frameId !== 0 || !sender.tab) return false;
  if (sender.documentLifecycle && sender.documentLifecycle !== "active") return false;
  if (typeof sender.url !== "string" || !sender.url.startsWith(`${WARNING_PAGE}?`)) return false;
  return new URL(sender.url).searchParams.get("id") === id;
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
      if (!fromWarningPage(sender, message.id)) return null;
      return recordedWarning(message.id);
    case "continue": {
      // "Continue anyway": the entry that decided is passed for this browser session; only
      // the warning page itself, shown in its tab, may ask.
      if (!fromWarningPage(sender, message.id)) {
        console.warn("phishbloom: \"continue\" refused: not from a warning page in its tab");
        return { ok: false };
      }
      const warning = await recordedWarning(message.id);
      if (!warning) return { ok: false };
      await pass(warning);
      await chrome.tabs.update(sender.tab.id, { url: warning.url });
      return { ok: true };
    }
    case "safety":
      if (!fromWarningPage(sender, message.id)) return { ok: false };
      await chrome.tabs.update(sender.tab.id, { url: "chrome://newtab/" });
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

/** Passes the entry that decided `warning` for this browser session (one pass at a time). */
function pass(warning) {
  state.passing = state.passing.catch(() => {}).then(async () => {
    const { passed = [] } = await chrome.storage.session.get("passed");
    passed.push({ list: warning.list.name, entry: warning.verdict.entry });
    await chrome.storage.session.set({ passed });
    await withCore((core) => core.setPassed(passed));
    await removeRulesNoLongerWarned();
  });
  return state.passing;
}

/** Drops the session rules of URLs the core no longer warns about. */
async function removeRulesNoLongerWarned() {
  const rules = await chrome.declarativeNetRequest.getSessionRules();
  const remove = [];
  for (const rule of rules) {
    const pattern = rule.condition.regexFilter || "";
    const url = pattern.slice(1, -1).replace(/\\(.)/g, "$1");
    if (!(await warningFor(url))) {
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
      trusted: l.trusted || "",
    })),
    memory: state.core.memoryBytes(),
    coreFailedAt: state.coreFailedAt,
  };
}

/**
 * The toolbar badge: the list version, or "!" after a failed update or a failure of the check
 * core, and a summary title.
 */
function badge() {
  const lists = [...state.lists.values()];
  const failing = lists.filter((l) => l.error);
  const loaded = lists.filter((l) => l.info);
  let text = "";
  let color = "#2e7d32";
  if (failing.length || state.coreFailedAt) {
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
  if (state.coreFailedAt) {
    const when = new Date(state.coreFailedAt).toLocaleTimeString();
    lines.push(`the check core failed at ${when} and was restarted from the stored lists`);
  }
  if (state.settings.provisional) lines.push("waiting for the administrator's policy");
  const c = state.counts;
  lines.push(`blocked: ${c.navigations} pages, ${c.subframes} frames, ${c.downloads} downloads`);
  chrome.action.setBadgeText({ text }).catch(() => {});
  chrome.action.setBadgeBackgroundColor({ color }).catch(() => {});
  chrome.action.setTitle({ title: `phishbloom\n${lines.join("\n")}` }).catch(() => {});
}
