(() => {
  const ide = document.currentScript && document.currentScript.dataset.rivetIde;
  if (!ide || window.parent === window) return;
  const MAX_REPORTS = 20;
  const MAX_CHARS = 4000;
  const seen = new Set();
  const here = location.origin + "/";
  const describe = (value) => {
    try {
      if (value instanceof Error) {
        const stack = value.stack || "";
        return stack.includes(value.message) ? stack : `${value.name}: ${value.message}\n${stack}`;
      }
      return typeof value === "string" ? value : JSON.stringify(value);
    } catch (_) {
      return String(value);
    }
  };
  // Stack frames name the page's own URLs: make them project paths.
  const clean = (text) =>
    String(text).split(here).join("").replace(/\?[tv]=[\w.-]+(?=:\d)/g, "").slice(0, MAX_CHARS);
  const post = (kind, text) => {
    const message = clean(text);
    const key = `${kind}\n${message}`;
    if (!message.trim() || seen.has(key) || seen.size >= MAX_REPORTS) return;
    seen.add(key);
    try {
      window.parent.postMessage({ source: "rivet-preview", kind, message }, ide);
    } catch (_) {}
  };
  addEventListener("error", (event) => {
    if (event.error !== undefined && event.error !== null) {
      post("error", describe(event.error));
    } else if (event.message) {
      post("error", `${event.message}\n    at ${clean(event.filename)}:${event.lineno}:${event.colno}`);
    }
  });
  addEventListener("unhandledrejection", (event) => {
    post("rejection", `Unhandled promise rejection: ${describe(event.reason)}`);
  });
  const original = console.error;
  console.error = function (...args) {
    post("console", args.map(describe).join(" "));
    return original.apply(this, args);
  };
})();
