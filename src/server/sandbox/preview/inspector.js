// The preview's element inspector ("point at it"), run from the same tag as
// the error reporter. The IDE's page turns select mode on and off with
// postMessage; while it is on, the element under the pointer is outlined
// with its tag and size, a click selects it, a double-click on a text
// element edits its text in place and Escape cancels. What the person chose
// goes to the IDE's origin only; the IDE checks it (runtime::selection).
(() => {
  const MAX_TEXT_CHARS = 500;
  const MAX_HTML_BYTES = 2048;
  const MAX_SELECTOR_CHARS = 1000;
  const MAX_CLASSES = 50;
  const MAX_CLASS_CHARS = 200;
  const MAX_CLASSES_IN_SELECTOR = 3;
  const MAX_NAME_CHARS = 1000;
  const MAX_EDIT_CHARS = 10000;
  const MAX_OWNERS = 50;
  // How long a click on a text element waits for a second one.
  const DOUBLE_CLICK_MS = 400;
  const NOT_EDITABLE = new Set(["script", "style", "textarea", "title", "option", "noscript", "template"]);
  // Listeners that come before the app's and may cancel.
  const CAPTURE = { capture: true, passive: false };
  // What the app must not act on while the person selects (a tap still
  // ends in a click, which selects).
  const BLOCKED = ["pointerdown", "mousedown", "pointerup", "mouseup", "auxclick", "contextmenu"];

  // A name a selection may keep: one line, not too long.
  function usableName(name, max) {
    return typeof name === "string" && name.trim() !== "" && name.length <= max && !/[\u0000-\u001f\u007f]/.test(name);
  }

  // Whether `.name` (escaped) is a selector the browser accepts.
  function validClass(name) {
    if (!usableName(name, MAX_CLASS_CHARS)) return false;
    try {
      document.createDocumentFragment().querySelector("." + CSS.escape(name));
      return true;
    } catch (_) {
      return false;
    }
  }

  function classesOf(el) {
    return Array.from(el.classList || []).filter(validClass).slice(0, MAX_CLASSES);
  }

  function uniqueId(el) {
    if (!usableName(el.id, MAX_NAME_CHARS)) return false;
    try {
      return document.querySelectorAll("#" + CSS.escape(el.id)).length === 1;
    } catch (_) {
      return false;
    }
  }

  // `tag.class1.class2:nth-of-type(n)`, the position only when a sibling
  // has the same tag.
  function segment(el, withClasses) {
    let text = CSS.escape(el.localName);
    if (withClasses) {
      for (const name of classesOf(el).slice(0, MAX_CLASSES_IN_SELECTOR)) text += "." + CSS.escape(name);
    }
    const parent = el.parentElement;
    if (!parent) return text;
    const same = Array.from(parent.children).filter((c) => c.localName === el.localName);
    if (same.length > 1) text += `:nth-of-type(${same.indexOf(el) + 1})`;
    return text;
  }

  // The path of segments from `body` (or from the nearest element with an
  // id unique in the document) down to `el`.
  function pathOf(el, withClasses) {
    const parts = [];
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      if (node === document.body || node === document.documentElement) {
        parts.unshift(node.localName);
        break;
      }
      if (uniqueId(node)) {
        parts.unshift("#" + CSS.escape(node.id));
        break;
      }
      parts.unshift(segment(node, withClasses));
    }
    return parts;
  }

  // A CSS selector that finds `el` from `body`; without class names when
  // they make it too long, and its top cut off when it still is.
  function selectorOf(el) {
    if (!el || el.nodeType !== 1) return "";
    let parts = pathOf(el, true);
    if (parts.join(" > ").length > MAX_SELECTOR_CHARS) parts = pathOf(el, false);
    while (parts.length > 1 && parts.join(" > ").length > MAX_SELECTOR_CHARS) parts.shift();
    return parts.join(" > ");
  }

  // A line or column as the IDE takes it (a u32), else null.
  function position(value) {
    return Number.isInteger(value) && value >= 0 && value <= 4294967295 ? value : null;
  }

  function located(file, line, column) {
    if (!usableName(file, MAX_NAME_CHARS)) return null;
    return { file, line: position(line), column: position(column) };
  }

  // React's dev build: the element's fiber, then its owners, for the
  // `_debugSource` the JSX transform wrote.
  function reactSource(el) {
    const key = Object.keys(el).find((k) => k.startsWith("__reactFiber$") || k.startsWith("__reactInternalInstance$"));
    let fiber = key ? el[key] : null;
    for (let i = 0; fiber && i < MAX_OWNERS; i++) {
      const source = fiber._debugSource;
      if (source && source.fileName) return located(source.fileName, source.lineNumber, source.columnNumber);
      fiber = fiber._debugOwner || fiber.return;
    }
    return null;
  }

  // Vue's dev build: the component the element belongs to names its file.
  function vueSource(el) {
    let component = el.__vueParentComponent;
    for (let i = 0; component && i < MAX_OWNERS; i++) {
      const file = component.type && component.type.__file;
      if (file) return located(file, null, null);
      component = component.parent;
    }
    return null;
  }

  // Svelte's dev build: the element's place in its component.
  function svelteSource(el) {
    const loc = el.__svelte_meta && el.__svelte_meta.loc;
    return loc && loc.file ? located(loc.file, loc.line, loc.column) : null;
  }

  // Where the element's code is, when the app's dev build says; else null.
  function sourceOf(el) {
    if (!el || el.nodeType !== 1) return null;
    try {
      return reactSource(el) || vueSource(el) || svelteSource(el);
    } catch (_) {
      return null;
    }
  }

  function cutBytes(text, max) {
    const encoder = new TextEncoder();
    if (encoder.encode(text).length <= max) return text;
    let out = "";
    let size = 0;
    for (const char of text) {
      size += encoder.encode(char).length;
      if (size > max) break;
      out += char;
    }
    return out;
  }

  function visibleText(el) {
    const text = typeof el.innerText === "string" ? el.innerText : el.textContent || "";
    return Array.from(text.replace(/\s+/g, " ").trim()).slice(0, MAX_TEXT_CHARS).join("");
  }

  // The element as the IDE's selection holds it.
  function describe(el) {
    const rect = el.getBoundingClientRect();
    return {
      selector: selectorOf(el),
      tag: el.localName.toLowerCase(),
      id: usableName(el.id, MAX_NAME_CHARS) ? el.id : null,
      classes: classesOf(el),
      text: visibleText(el),
      html: cutBytes(el.outerHTML || "", MAX_HTML_BYTES),
      rect: {
        x: Math.round(rect.x),
        y: Math.round(rect.y),
        width: Math.round(rect.width),
        height: Math.round(rect.height),
      },
      source: sourceOf(el),
    };
  }

  // For the page script's tests.
  globalThis.__rivetInspector = { selectorOf, describe, sourceOf };

  const script = document.currentScript;
  const ide = (script && script.dataset && script.dataset.rivetIde) || globalThis.__rivetIdeOrigin;
  if (!ide || window.parent === window || globalThis.__rivetInspectorRunning) return;
  globalThis.__rivetInspectorRunning = true;

  let on = false;
  let overlay = null;
  let label = null;
  let hovered = null;
  let pending = 0;

  function post(message) {
    try {
      window.parent.postMessage(message, ide);
    } catch (_) {}
  }

  function stop(event) {
    event.preventDefault();
    event.stopImmediatePropagation();
  }

  function makeOverlay() {
    overlay = document.createElement("div");
    overlay.setAttribute("data-rivet-inspector", "");
    Object.assign(overlay.style, {
      position: "fixed",
      pointerEvents: "none",
      zIndex: "2147483647",
      boxSizing: "border-box",
      outline: "2px solid #2563eb",
      background: "rgba(37, 99, 235, 0.12)",
      margin: "0",
      padding: "0",
    });
    label = document.createElement("div");
    Object.assign(label.style, {
      position: "absolute",
      left: "0",
      font: "11px/16px ui-monospace, monospace",
      color: "#fff",
      background: "#2563eb",
      padding: "0 4px",
      borderRadius: "2px",
      whiteSpace: "nowrap",
    });
    overlay.appendChild(label);
  }

  function showOverlay(el) {
    if (!overlay) makeOverlay();
    if (!overlay.isConnected) document.documentElement.appendChild(overlay);
    const rect = el.getBoundingClientRect();
    Object.assign(overlay.style, {
      left: `${rect.left}px`,
      top: `${rect.top}px`,
      width: `${rect.width}px`,
      height: `${rect.height}px`,
    });
    label.style.top = rect.top >= 18 ? "-18px" : "0";
    // "\u00d7" is the multiplication sign: the script stays ASCII, whatever
    // the page's encoding.
    label.textContent = `${el.localName} ${Math.round(rect.width)}\u00d7${Math.round(rect.height)}`;
  }

  function hideOverlay() {
    if (overlay) overlay.remove();
    hovered = null;
  }

  // The element an event is about, inside open shadow roots too.
  function targetOf(event) {
    const path = event.composedPath ? event.composedPath() : [];
    const target = path[0] || event.target;
    if (!target) return null;
    if (target.nodeType === 1) return target;
    return target.parentElement || null;
  }

  function isTextElement(el) {
    if (!(el instanceof HTMLElement) || NOT_EDITABLE.has(el.localName) || el.isContentEditable) return false;
    const nodes = Array.from(el.childNodes);
    return nodes.length > 0 && nodes.every((n) => n.nodeType === Node.TEXT_NODE) && el.textContent.trim() !== "";
  }

  function select(el) {
    setOn(false);
    post({ source: "rivet-preview", kind: "selected", element: describe(el) });
  }

  function onMove(event) {
    const el = targetOf(event);
    if (!el || el === overlay) return;
    hovered = el;
    showOverlay(el);
  }

  function onScroll() {
    if (hovered && hovered.isConnected) showOverlay(hovered);
  }

  // A click selects at once, unless it is on a text element, whose second
  // click (a double-click) edits it instead.
  function onClick(event) {
    stop(event);
    const el = targetOf(event);
    if (!el || event.detail >= 2) return;
    clearTimeout(pending);
    if (!isTextElement(el)) {
      select(el);
      return;
    }
    pending = setTimeout(() => {
      pending = 0;
      if (on) select(el);
    }, DOUBLE_CLICK_MS);
  }

  function onDoubleClick(event) {
    stop(event);
    clearTimeout(pending);
    pending = 0;
    const el = targetOf(event);
    if (!el) return;
    if (isTextElement(el)) editText(el);
    else select(el);
  }

  function onKey(event) {
    if (event.key !== "Escape") return;
    stop(event);
    setOn(false);
    post({ source: "rivet-preview", kind: "select-cancelled" });
  }

  const HANDLERS = [
    ["pointermove", onMove],
    ["scroll", onScroll],
    ["click", onClick],
    ["dblclick", onDoubleClick],
    ["keydown", onKey],
  ].concat(BLOCKED.map((type) => [type, stop]));

  function setOn(value) {
    if (value === on) return;
    on = value;
    for (const [type, handler] of HANDLERS) {
      if (on) addEventListener(type, handler, CAPTURE);
      else removeEventListener(type, handler, CAPTURE);
    }
    if (!on) {
      clearTimeout(pending);
      pending = 0;
      hideOverlay();
    }
  }

  function selectContents(el) {
    const range = document.createRange();
    range.selectNodeContents(el);
    const selection = getSelection();
    if (!selection) return;
    selection.removeAllRanges();
    selection.addRange(range);
  }

  // Makes `el`'s text editable in place. Enter (without Shift) or leaving
  // it keeps the new text and tells the IDE; Escape puts the old one back.
  function editText(el) {
    setOn(false);
    const element = describe(el);
    const nodes = Array.from(el.childNodes);
    const data = nodes.map((n) => n.data);
    const oldText = el.textContent.trim();
    const hadAttribute = el.getAttribute("contenteditable");
    el.contentEditable = "plaintext-only";
    if (el.contentEditable !== "plaintext-only") el.contentEditable = "true";
    const onKeyDown = (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        el.blur();
      } else if (event.key === "Escape") {
        event.preventDefault();
        finish(false);
      }
    };
    // The app does not hear of what happens inside while it is edited (the
    // browser still edits: only the event's way to the app is cut).
    const shield = (event) => {
      if (!el.contains(targetOf(event))) return;
      event.stopImmediatePropagation();
      if (event.type === "keydown") onKeyDown(event);
      if (event.type === "click") event.preventDefault();
    };
    const shielded = ["keydown", "keyup", "keypress", "input", "beforeinput", "click", "dblclick"].concat(BLOCKED);
    let done = false;
    const finish = (keep) => {
      if (done) return;
      done = true;
      el.removeEventListener("blur", onBlur);
      for (const type of shielded) removeEventListener(type, shield, CAPTURE);
      if (hadAttribute === null) el.removeAttribute("contenteditable");
      else el.setAttribute("contenteditable", hadAttribute);
      if (!keep) {
        nodes.forEach((node, i) => {
          node.data = data[i];
        });
        el.replaceChildren(...nodes);
      }
      const newText = el.textContent.trim();
      const fits = oldText.length <= MAX_EDIT_CHARS && newText.length <= MAX_EDIT_CHARS;
      if (keep && newText !== oldText && fits) {
        post({ source: "rivet-preview", kind: "text-edited", element, old_text: oldText, new_text: newText });
      } else {
        post({ source: "rivet-preview", kind: "select-cancelled" });
      }
    };
    const onBlur = () => finish(true);
    for (const type of shielded) addEventListener(type, shield, CAPTURE);
    el.addEventListener("blur", onBlur);
    el.focus();
    selectContents(el);
  }

  addEventListener("message", (event) => {
    if (event.origin !== ide) return;
    const data = event.data;
    if (!data || data.source !== "rivet-ide" || data.kind !== "select" || typeof data.on !== "boolean") return;
    setOn(data.on);
  });
})();
