// phishbloom's check core (crates/wasm compiled to WebAssembly) for JavaScript: the browser
// extension's service worker and `cli.mjs` (node) both use this one wrapper. It only moves
// bytes: every rule (reading a list, the verdict, the printed line, deltas, sync plans) is the
// Rust code behind the `pb_*` exports; see crates/wasm/src/exports.rs for their contract.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The loaded WebAssembly module with byte-moving helpers around its exports.
 *
 * The core is built with panic=abort: a panic traps (a `WebAssembly.RuntimeError`) and leaves
 * the instance unusable (its state stays borrowed, so every later call traps too). Every export
 * call that traps marks the core `failed`, calls `onTrap(error)` (set by the owner, which
 * replaces the core: `Core.load(core.module)` and the lists loaded again) and rethrows.
 */
export class Core {
  /** Instantiates the core from the .wasm file's bytes (or a compiled WebAssembly.Module). */
  static async load(wasm) {
    const module = wasm instanceof WebAssembly.Module ? wasm : await WebAssembly.compile(wasm);
    // The module's one import reads the list file being loaded (see `loadList`); it reaches the
    // Core through `held`, which exists only once the instance does.
    const held = {};
    const imports = {
      env: { pb_host_read: (offset, dest, len) => held.core.hostRead(offset, dest, len) },
    };
    held.core = new Core(await WebAssembly.instantiate(module, imports), module);
    return held.core;
  }

  constructor(instance, module = null) {
    /** The compiled module, to instantiate a fresh core from after a trap. */
    this.module = module;
    /** Whether an export trapped: this instance must not be used again. */
    this.failed = false;
    /** Called with the `WebAssembly.RuntimeError` of the first trap. */
    this.onTrap = null;
    /** The file a `loadList` call is reading (its bytes), between the call's start and end. */
    this.hostFile = null;
    this.x = {};
    for (const [name, value] of Object.entries(instance.exports)) {
      this.x[name] = typeof value === "function" ? this.guarded(name, value) : value;
    }
  }

  /** `f` (an export) wrapped so that a trap marks the core failed and is reported once. */
  guarded(name, f) {
    return (...args) => {
      try {
        return f(...args);
      } catch (error) {
        if (error instanceof WebAssembly.RuntimeError) {
          const first = !this.failed;
          this.failed = true;
          if (first && this.onTrap) this.onTrap(error);
          throw new WebAssembly.RuntimeError(`the check core failed in ${name}: ${error.message}`);
        }
        throw error;
      }
    };
  }

  /** Bytes of the module's linear memory now (what the lists and buffers take). */
  memoryBytes() {
    return this.x.memory.buffer.byteLength;
  }

  /** Runs `f(ptr, len, ...)` with each argument (string or bytes) copied into module memory. */
  withInputs(inputs, f) {
    const held = inputs.map((input) => {
      const bytes = typeof input === "string" ? encoder.encode(input) : input;
      const ptr = this.x.pb_alloc(bytes.length);
      new Uint8Array(this.x.memory.buffer, ptr, bytes.length).set(bytes);
      return [ptr, bytes.length];
    });
    try {
      return f(...held.flat());
    } finally {
      for (const [ptr, len] of held) this.x.pb_free(ptr, len);
    }
  }

  /** A copy of the last call's result bytes. */
  resultBytes() {
    const ptr = this.x.pb_result_ptr();
    const len = this.x.pb_result_len();
    return new Uint8Array(this.x.memory.buffer, ptr, len).slice();
  }

  /** The last call's result as text. */
  resultText() {
    const ptr = this.x.pb_result_ptr();
    const len = this.x.pb_result_len();
    return decoder.decode(new Uint8Array(this.x.memory.buffer, ptr, len));
  }

  /** The last call's result parsed as JSON. */
  resultJson() {
    return JSON.parse(this.resultText());
  }

  /**
   * Reads a list from its file image; returns its handle, or throws the core's error. The core
   * reads the file in place, section by section (`hostRead`), into the structures that keep
   * them: no copy of the file enters the module's memory, which never shrinks once grown.
   */
  loadList(name, bytes) {
    this.hostFile = bytes;
    let handle;
    try {
      handle = this.withInputs([name], (n, nl) => this.x.pb_load_host(n, nl, bytes.length));
    } finally {
      this.hostFile = null;
    }
    if (handle === 0) throw new Error(this.resultText());
    return handle;
  }

  /** The import `env.pb_host_read`: copies `len` bytes of the file being loaded from `offset`
   * to `dest` in module memory; 0, or -1 when the range is not in the file. */
  hostRead(offset, dest, len) {
    const file = this.hostFile;
    // wasm32 pointers and lengths arrive as signed 32-bit numbers: read them unsigned.
    const [at, size] = [dest >>> 0, len >>> 0];
    if (file === null || offset < 0 || offset + size > file.length) return -1;
    try {
      // A fresh view each time: the module's memory may have grown (and its buffer changed).
      new Uint8Array(this.x.memory.buffer, at, size).set(file.subarray(offset, offset + size));
      return 0;
    } catch {
      return -1;
    }
  }

  /** Drops a held list. */
  dropList(handle) {
    this.x.pb_drop(handle);
  }

  /** The list's info: {name, version, entries, created, fingerprint, kind, categories}. */
  info(handle) {
    if (this.x.pb_info(handle) < 0) throw new Error(this.resultText());
    return this.resultJson();
  }

  /** The line(s) `phishbloom check` prints for one item (bytes or string) and its code. */
  check(handle, item, json = false) {
    const code = this.withInputs([item], (p, l) => this.x.pb_check(handle, p, l, json ? 1 : 0));
    if (code < 0) throw new Error(this.resultText());
    return { code, bytes: this.resultBytes() };
  }

  /** Answers a stream's bytes as `phishbloom check` answers standard input. */
  checkLines(handle, text, json = false) {
    const listed = this.withInputs([text], (p, l) =>
      this.x.pb_check_lines(handle, p, l, json ? 1 : 0),
    );
    if (listed < 0) throw new Error(this.resultText());
    return { listed, bytes: this.resultBytes() };
  }

  /** The warning for a navigation to `url` across every held list, or null. */
  warning(url) {
    const listed = this.withInputs([url], (p, l) => this.x.pb_warning(p, l));
    return listed === 1 ? this.resultJson() : null;
  }

  /** The entries the user continued past this session: [{list, entry}]. */
  setPassed(passed) {
    const text = passed.map(({ list, entry }) => `${list}\t${entry}\n`).join("");
    this.withInputs([text], (p, l) => this.x.pb_set_passed(p, l));
  }

  /** The held list's file image (for storage). */
  toBytes(handle) {
    if (this.x.pb_to_bytes(handle) < 0) throw new Error(this.resultText());
    return this.resultBytes();
  }

  /**
   * Begins a sync of the list `handle` (0: none held yet) from an index's bytes; `trust` is a
   * public key's text form or "". Returns {session, plan} or throws the core's refusal (an
   * index past its expiry at `now`, seconds since the epoch, among them).
   */
  syncBegin(handle, origin, indexBytes, trust = "", allowRollback = false, now = Date.now() / 1000) {
    const session = this.withInputs([origin, indexBytes, trust || ""], (o, ol, i, il, t, tl) =>
      this.x.pb_sync_begin(handle, o, ol, i, il, t, tl, allowRollback ? 1 : 0, now),
    );
    if (session === 0) throw new Error(this.resultText());
    return { session, plan: this.resultJson() };
  }

  /** The next download of a sync ({path, bytes}), or null when it can finish. */
  syncNext(session) {
    const code = this.x.pb_sync_next(session);
    if (code < 0) throw new Error(this.resultText());
    return code === 1 ? this.resultJson() : null;
  }

  /** Hands a sync the bytes it asked for; throws when the sync cannot go on. */
  syncGive(session, bytes) {
    const code = this.withInputs([bytes], (p, l) => this.x.pb_sync_give(session, p, l, 0));
    if (code < 0) throw new Error(this.resultText());
  }

  /** Tells a sync its download failed (it falls back or throws when it cannot go on). */
  syncFailed(session, why) {
    const code = this.withInputs([String(why)], (p, l) => this.x.pb_sync_give(session, p, l, 1));
    if (code < 0) throw new Error(this.resultText());
  }

  /**
   * Ends a sync: {handle, summary} of the list now current; throws on a refusal. `handle` must
   * be the one the sync began with, still holding the same list (the core refuses a list
   * dropped or replaced meanwhile, even if its handle now names another list).
   */
  syncFinish(session, handle) {
    const current = this.x.pb_sync_finish(session, handle);
    if (current === 0) throw new Error(this.resultText());
    return { handle: current, summary: this.resultJson() };
  }

  /** Abandons a sync (harmless when it already ended). */
  syncEnd(session) {
    this.x.pb_sync_end(session);
  }

  /** Seconds until the next poll of a list (the publisher's interval, the back-off rule). */
  nextPoll(everySeconds, minInterval, failures) {
    return this.x.pb_next_poll(everySeconds, minInterval, failures, Math.random());
  }
}
