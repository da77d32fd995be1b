// The extension's list storage: one IndexedDB record per list base URL holding the list's
// file image, the key that verified it (`key`: the trusted key's text, or "none"; see
// config.keyOf) and what the next sync needs (the index ETag and the version it was read at),
// so a restarted service worker reloads every list without a download.

const DB_NAME = "phishbloom";
const STORE = "lists";

let opened = null;

/** The database, opened once per worker. */
function db() {
  if (!opened) {
    opened = new Promise((resolve, reject) => {
      const request = indexedDB.open(DB_NAME, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: "url" });
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  }
  return opened;
}

/** Runs one request in a transaction and resolves with its result. */
async function run(mode, make) {
  const database = await db();
  return new Promise((resolve, reject) => {
    const tx = database.transaction(STORE, mode);
    const request = make(tx.objectStore(STORE));
    tx.oncomplete = () => resolve(request.result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

/** Every stored list: [{url, bytes (Uint8Array), key, etag, etagVersion, syncedAt}]. */
export function all() {
  return run("readonly", (store) => store.getAll());
}

/** The URLs of every stored list. */
export function urls() {
  return run("readonly", (store) => store.getAllKeys());
}

/** Stores (or replaces) one list's record. */
export function put(record) {
  return run("readwrite", (store) => store.put(record));
}

/** Forgets one list. */
export function remove(url) {
  return run("readwrite", (store) => store.delete(url));
}
