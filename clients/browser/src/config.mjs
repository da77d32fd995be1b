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

/** The administrator's policy ({} when there is none). */
export async function managed() {
  try {
    return (await chrome.storage.managed.get(null)) || {};
  } catch {
    return {};
  }
}

/** The user's settings from the options page ({} when never saved). */
export async function local() {
  return (await chrome.storage.local.get("config")).config || {};
}

/** The settings in force: {lists, update_seconds, trust, managed (fields the policy sets)}. */
export async function load() {
  const [base, user, policy] = await Promise.all([shipped(), local(), managed()]);
  const pick = (field, fallback) => policy[field] ?? user[field] ?? base[field] ?? fallback;
  const lists = pick("lists", []).filter((url) => typeof url === "string" && url.trim() !== "");
  return {
    lists: [...new Set(lists.map((url) => url.trim().replace(/\/+$/, "")))],
    update_seconds: Math.max(1, Number(pick("update_seconds", 300)) || 300),
    trust: pick("trust", ""),
    managed: Object.keys(policy),
  };
}
