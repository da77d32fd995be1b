// The extension's settings: the shipped dist/config.json ({"lists": [URL...],
// "update_seconds": N, "trust": KEY-TEXT}), overridden field by field by what the options page
// saved (storage.local "config"), both overridden by an administrator's policy
// (chrome.storage.managed, described by managed_schema.json).
//
// The policy decides which lists are followed and which key must sign them, so nothing may be
// synced or pruned on a guess of it: reading it can take seconds where the browser has no
// policy service (Chromium on Linux without one answers late). Every answer is cached in
// storage.local ("policy"); until the policy answers, the settings are built from that cache
// and marked `provisional` (the worker then only checks with the lists it stored, and neither
// syncs nor forgets any).

/** The storage.local key of the last policy answer. */
const CACHE = "policy";

/** The shipped defaults. */
async function shipped() {
  try {
    const response = await fetch(chrome.runtime.getURL("config.json"));
    return await response.json();
  } catch {
    return {};
  }
}

/** The last policy answer cached, or null if none ever came. */
async function cached() {
  const value = (await chrome.storage.local.get(CACHE))[CACHE];
  return value && typeof value === "object" ? value : null;
}

/** The policy read in flight (one at a time; a later read asks again). */
let reading = null;

/**
 * Reads the policy ({} when there is none) and caches the answer. A read that fails is no
 * answer about the policy: the cached one is used (or {} if none ever came).
 */
function readPolicy() {
  if (!reading) {
    reading = chrome.storage.managed
      .get(null)
      .then(
        async (policy) => {
          const answer = policy && typeof policy === "object" ? policy : {};
          await chrome.storage.local.set({ [CACHE]: answer });
          return answer;
        },
        async (error) => {
          console.warn(`phishbloom: the policy could not be read: ${error && error.message}`);
          return (await cached()) || {};
        },
      )
      .finally(() => {
        reading = null;
      });
  }
  return reading;
}

/**
 * The administrator's policy: {policy, answered}. With `waitMs`, gives up waiting after that
 * long: then `policy` is the last answer cached ({} if none) and `answered` false; the read
 * goes on and caches its answer when it comes (`load()` waits for it).
 */
export async function managed(waitMs = Infinity) {
  const read = readPolicy().then((policy) => ({ policy, answered: true }));
  if (!Number.isFinite(waitMs)) return read;
  const timeout = new Promise((resolve) => setTimeout(resolve, waitMs, null));
  const first = await Promise.race([read, timeout]);
  return first || { policy: (await cached()) || {}, answered: false };
}

/** The user's settings from the options page ({} when never saved). */
export async function local() {
  return (await chrome.storage.local.get("config")).config || {};
}

/**
 * The settings in force: {lists, update_seconds, trust, managed (fields the policy sets),
 * provisional (the policy has not answered within `policyWaitMs`: built from its cached
 * answer; see `managed`)}.
 */
export async function load(policyWaitMs = Infinity) {
  const [base, user, { policy, answered }] = await Promise.all([
    shipped(),
    local(),
    managed(policyWaitMs),
  ]);
  const pick = (field, fallback) => policy[field] ?? user[field] ?? base[field] ?? fallback;
  const listed = pick("lists", []);
  const lists = (Array.isArray(listed) ? listed : []).filter(
    (url) => typeof url === "string" && url.trim() !== "",
  );
  const trust = pick("trust", "");
  return {
    lists: [...new Set(lists.map((url) => url.trim().replace(/\/+$/, "")))],
    update_seconds: Math.max(1, Number(pick("update_seconds", 300)) || 300),
    trust: typeof trust === "string" ? trust : "",
    managed: Object.keys(policy),
    provisional: !answered,
  };
}

/**
 * What a stored copy records as the key that verified it: the trusted key's text (trimmed),
 * or "none" when no key was trusted.
 */
export function keyOf(trust) {
  const text = (trust || "").trim();
  return text === "" ? "none" : text;
}

/**
 * Whether a copy verified under `key` (see `keyOf`; a copy stored before keys were recorded
 * has none) may be used while `trust` is configured: always when no key is trusted, else only
 * when that very key verified it.
 */
export function usable(key, trust) {
  const wanted = keyOf(trust);
  return wanted === "none" || key === wanted;
}
