// The prelude runs in each fresh VM before the script. It takes the one host
// function, __host, off the global object and keeps it in this closure, so the
// script reaches the host only through tools and console, and it keeps its own
// copies of the built-ins it uses, so a script that replaces JSON, Reflect or
// Promise.prototype.then changes its own results only.
//
// It returns the function the Go side calls: "start" with the script's source,
// "settle" with a tool call's outcome.
(() => {
  const host = globalThis.__host;
  delete globalThis.__host;

  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const apply = Reflect.apply;
  const then = Promise.prototype.then;
  const getPrototypeOf = Object.getPrototypeOf;
  const isArray = Array.isArray;
  const create = Object.create;
  const PromiseC = Promise;
  const ErrorC = Error;
  const TypeErrorC = TypeError;
  const StringC = String;
  const repeat = String.prototype.repeat;
  const ObjectPrototype = Object.prototype;
  const AsyncFunction = getPrototypeOf(async function () {}).constructor;

  // str renders any value as a string without letting a throwing toString
  // escape.
  const str = (v) => {
    try {
      return StringC(v);
    } catch (e) {
      return "[unprintable value]";
    }
  };

  // render renders a console argument: strings as they are, errors with
  // their stack, anything else as JSON where it can be.
  // Reading v runs the script's code (a getter, a Proxy's traps), which may
  // throw: then it is unprintable.
  const render = (v) => {
    try {
      if (typeof v === "string") return v;
      if (v instanceof ErrorC) {
        const s = str(v);
        return typeof v.stack === "string" && v.stack !== "" ? s + "\n" + v.stack : s;
      }
      if (typeof v === "object" && v !== null) {
        try {
          const s = stringify(v);
          if (typeof s === "string") return s;
        } catch (e) {}
      }
      return str(v);
    } catch (e) {
      return "[unprintable value]";
    }
  };

  const pending = create(null);
  let next = 0;

  const call = (name, args) => {
    if (args === undefined) args = {};
    if (args === null || typeof args !== "object" || isArray(args) ||
        (getPrototypeOf(args) !== ObjectPrototype && getPrototypeOf(args) !== null)) {
      throw new TypeErrorC(`tools[${stringify(name)}]: the arguments must be a plain object like {"key": "value"}, got ${args === null ? "null" : isArray(args) ? "an array" : typeof args}`);
    }
    const json = stringify(args);
    // A toJSON can make the arguments something else than an object.
    if (typeof json !== "string" || json[0] !== "{") {
      throw new TypeErrorC(`tools[${stringify(name)}]: the arguments must convert to a JSON object, got ${json === undefined ? "nothing" : json}`);
    }
    const id = ++next;
    // The Error a failure rejects with is made here, so that its stack is
    // where the script called the tool.
    const error = new ErrorC();
    error.tool = name;
    const p = new PromiseC((resolve, reject) => {
      pending[id] = { resolve, reject, error };
    });
    host("call", id, name, json);
    return p;
  };

  // Every string property is a tool; "then" and "toJSON" are not, so that
  // awaiting or printing tools does not call one.
  const tools = new Proxy(create(null), {
    get(target, name) {
      if (typeof name !== "string" || name === "then" || name === "toJSON") return undefined;
      return (args) => call(name, args);
    },
    has(target, name) {
      return typeof name === "string" && name !== "then" && name !== "toJSON";
    },
    set() {
      return false;
    },
    defineProperty() {
      return false;
    },
  });

  const log = (level) => (...args) => {
    let line = "";
    for (let i = 0; i < args.length; i++) {
      line += (i > 0 ? " " : "") + render(args[i]);
    }
    host("log", level, line);
  };
  const console = create(null);
  console.log = log("log");
  console.info = log("info");
  console.warn = log("warn");
  console.error = log("error");
  console.debug = log("debug");

  globalThis.tools = tools;
  globalThis.console = console;

  // failed ends the run with e, the exception the script did not catch.
  // Reading e runs the script's code (getters, a Proxy's traps), which may
  // throw in turn: then that exception is the one reported.
  const failed = (e) => {
    for (let i = 0; i < 3; i++) {
      try {
        if (e instanceof ErrorC) {
          host("done", false, str(e), typeof e.stack === "string" ? e.stack : "", str(e.name), str(e.message), false);
        } else {
          host("done", false, render(e), "", "", "", e === null);
        }
        return;
      } catch (e2) {
        e = e2;
      }
    }
    host("done", false, "the script threw a value that cannot be read", "", "", "", false);
  };

  const start = (src) => {
    const p = new AsyncFunction(src)();
    apply(then, p, [
      (v) => {
        let s;
        try {
          s = stringify(v);
        } catch (e) {
          host("done", false, "the return value cannot be converted to JSON: " + str(e), "", "TypeError", "");
          return;
        }
        host("done", true, s === undefined ? "null" : s);
      },
      failed,
    ]);
  };

  // headroom throws the engine's "out of memory" when the heap is within a
  // few KiB of its limit. The engine drops, without an error, the job that
  // resumes the script when it cannot allocate it: a settled call that
  // leaves no room would leave the script waiting for ever, and the run
  // reported as never settling instead of out of memory.
  const headroom = () => apply(repeat, "x", [8192]);

  const settle = (id, ok, value, message, code, result) => {
    const p = pending[id];
    delete pending[id];
    if (ok) {
      p.resolve(parse(value));
      headroom();
      return;
    }
    const e = p.error;
    e.message = message;
    if (code !== null) e.code = code;
    if (result !== "") e.result = parse(result);
    p.reject(e);
    headroom();
  };

  return (op, a, b, c, d, e, f) => (op === "start" ? start(a) : settle(a, b, c, d, e, f));
})()
