// The extension's settings: the shipped dist/config.json ({"lists": [URL...],
// "update_seconds": N, "trust": KEY-TEXT}), overridden field by field by what the options page
// saved (storage.local "config"), both overridden by an administrator's policy
// (chrome.storage.managed, described by managed_schema.json).

/** The shipped defaults. */
async function shipped() {
  try {
    const response = await fetch(chrome.runtime.getURL("config.json"));
    return await response.json();
  } catch {
    return {};
  }
}

/**
 * The administrator's policy ({} when there is none). Reading it can take seconds where the
 * browser has no policy service (Chromium on Linux without one answers late): with `waitMs`,
 * gives {} after that long; `policyArrived` then resolves with the late answer.
 */
export async function managed(waitMs = Infinity) {
  const read = chrome.storage.managed.get(null).then(
    (policy) => policy || {},
    () => ({}),
  );
  if (!Number.isFinite(waitMs)) return read;
  let late = true;
  const timeout = new Promise((resolve) => setTimeout(resolve, waitMs, null));
  const first = await Promise.race([read.then((p) => ((late = false), p)), timeout]);
  if (late) policyArrived = read;
  return first || {};
}

/** The policy read that outlasted `managed(waitMs)`, if one did (else null). */
export let policyArrived = null;

/** The user's settings from the options page ({} when never saved). */
export async function local() {
  return (await chrome.storage.local.get("config")).config || {};
}

/**
 * The settings in force: {lists, update_seconds, trust, managed (fields the policy sets)};
 * `policyWaitMs` bounds the wait for the policy (see `managed`).
 */
export async function load(policyWaitMs = Infinity) {
  const [base, user, policy] = await Promise.all([shipped(), local(), managed(policyWaitMs)]);
  const pick = (field, fallback) => policy[field] ?? user[field] ?? base[field] ?? fallback;
  const lists = pick("lists", []).filter((url) => typeof url === "string" && url.trim() !== "");
  return {
    lists: [...new Set(lists.map((url) => url.trim().replace(/\/+$/, "")))],
    update_seconds: Math.max(1, Number(pick("update_seconds", 300)) || 300),
    trust: pick("trust", ""),
    managed: Object.keys(policy),
  };
}
