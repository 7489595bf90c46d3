// The page as compact text: one line per visible semantic node (role, name, ref), in document
// order. Interactive elements get a ref (`e12`) kept on the element as data-atomic-ref, so an
// unchanged page walks to the same bytes and a ref stays valid until the element goes away.
// Invisible nodes (hidden, aria-hidden, display:none, visibility:hidden) are skipped, a text
// or table row that repeats the line just before it is dropped, and the walk stops at maxChars with a marker.
// Returns {lines, truncated, rawChars (with args.measure, else 0), nodes}.
(args) => {
  const maxChars = args.maxChars;
  const maxNameChars = args.maxNameChars;
  const maxTextChars = args.maxTextChars;  // a run of text keeps more than a name: it is the page's content
  const REF = "data-atomic-ref";
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE"]);
  const INLINE = new Set(["SPAN", "B", "I", "EM", "STRONG", "CODE", "SMALL", "ABBR", "TIME", "SUP", "SUB", "MARK",
    "KBD", "VAR", "Q", "CITE", "DFN", "S", "U", "BR", "WBR", "DATA", "BDI", "BDO", "FONT"]);
  const LANDMARK = {NAV: "navigation", MAIN: "main", HEADER: "banner", FOOTER: "contentinfo", ASIDE: "complementary",
    FORM: "form", DIALOG: "dialog", UL: "list", OL: "list", TABLE: "table", FIELDSET: "group", DL: "list"};
  const lines = [];
  let used = 0, truncated = false, nodes = 0;
  // the page's serialized size, before refs are added (for the benchmark's ratio; costly on a big page)
  const rawChars = args.measure
    ? document.documentElement.outerHTML.replace(/ data-atomic-refs?="[^"]*"/g, "").length : 0;
  let counter = Number(document.documentElement.getAttribute("data-atomic-refs") || "0");

  const clean = (text) => (text || "").replace(/\s+/g, " ").trim();
  const cut = (text) => text.length > maxNameChars ? text.slice(0, maxNameChars - 1) + "…" : text;
  const quote = (text) => JSON.stringify(cut(clean(text)));
  const quoteText = (text) => {
    const t = clean(text);
    return JSON.stringify(t.length > maxTextChars ? t.slice(0, maxTextChars - 1) + "…" : t);
  };

  function hidden(el) {
    if (el.hidden || el.getAttribute("aria-hidden") === "true") return true;
    if (el.tagName === "INPUT" && el.type === "hidden") return true;
    if (typeof el.checkVisibility === "function") {
      if (!el.checkVisibility({visibilityProperty: true, contentVisibilityAuto: false})) {
        // display:contents keeps its children visible
        return getComputedStyle(el).display !== "contents";
      }
      return false;
    }
    const style = getComputedStyle(el);
    return style.display === "none" || style.visibility === "hidden";
  }

  function labelOf(el) {
    const aria = el.getAttribute("aria-label");
    if (aria && clean(aria)) return clean(aria);
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const text = by.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean)
        .map((n) => n.textContent).join(" ");
      if (clean(text)) return clean(text);
    }
    if (el.labels && el.labels.length) {
      const text = Array.from(el.labels).map((l) => l.textContent).join(" ");
      if (clean(text)) return clean(text);
    }
    for (const attr of ["alt", "title", "placeholder"]) {
      const v = el.getAttribute(attr);
      if (v && clean(v)) return clean(v);
    }
    return "";
  }

  function roleOf(el) {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit.split(/\s+/)[0];
    const tag = el.tagName;
    if (tag === "A") return el.hasAttribute("href") ? "link" : "";
    if (tag === "BUTTON" || tag === "SUMMARY") return "button";
    if (tag === "SELECT") return el.multiple ? "listbox" : "combobox";
    if (tag === "TEXTAREA") return "textbox";
    if (tag === "INPUT") {
      const type = (el.type || "text").toLowerCase();
      if (["button", "submit", "reset", "image"].includes(type)) return "button";
      if (type === "checkbox") return "checkbox";
      if (type === "radio") return "radio";
      if (type === "range") return "slider";
      if (type === "number") return "spinbutton";
      if (type === "search") return "searchbox";
      if (type === "file") return "button";
      return "textbox";
    }
    if (/^H[1-6]$/.test(tag)) return "heading";
    if (tag === "IMG") return el.getAttribute("alt") ? "img" : "";
    if (tag === "IFRAME") return "iframe";
    return "";
  }

  const INTERACTIVE = new Set(["link", "button", "textbox", "searchbox", "combobox", "listbox", "checkbox", "radio",
    "slider", "spinbutton", "switch", "tab", "menuitem", "option", "treeitem"]);

  function refOf(el) {
    let ref = el.getAttribute(REF);
    if (!ref) {
      counter += 1;
      ref = "e" + counter;
      el.setAttribute(REF, ref);
    }
    return ref;
  }

  function emit(depth, text) {
    if (truncated) return;
    const line = "  ".repeat(depth) + "- " + text;
    if (used + line.length + 1 > maxChars) { truncated = true; return; }
    lines.push(line);
    used += line.length + 1;
  }

  function stateOf(el, role) {
    const parts = [];
    if (role === "checkbox" || role === "radio" || role === "switch") parts.push(el.checked ? "checked" : "unchecked");
    if (role === "textbox" || role === "searchbox" || role === "spinbutton" || role === "slider") {
      if (el.type === "password") {
        if (el.value) parts.push("value=(" + el.value.length + " characters, hidden)");
      } else if (el.value) {
        parts.push("value=" + quote(el.value));
      }
    }
    if (role === "combobox" || role === "listbox") {
      const options = Array.from(el.options || []);
      const chosen = options.filter((o) => o.selected).map((o) => clean(o.label || o.text));
      if (chosen.length) parts.push("value=" + quote(chosen.join(", ")));
      const shown = options.slice(0, 25).map((o) => cut(clean(o.label || o.text)));
      parts.push("options: " + shown.join(" | ") + (options.length > 25 ? " | … " + (options.length - 25) + " more" : ""));
    }
    if (el.disabled) parts.push("disabled");
    if (el.getAttribute("aria-expanded")) parts.push("expanded=" + el.getAttribute("aria-expanded"));
    return parts.length ? " " + parts.join(" ") : "";
  }

  function hasInteractive(el) {
    return el.querySelector("a[href],button,input,select,textarea,summary,[role],[tabindex],iframe,img[alt],h1,h2,h3,h4,h5,h6") !== null;
  }

  const CONTROLS = "a[href],button,input,select,textarea,summary";

  function controlLine(el) {
    const role = roleOf(el);
    if (!INTERACTIVE.has(role) || hidden(el)) return "";
    const name = role === "link" || role === "button" ? (labelOf(el) || clean(el.innerText || el.textContent))
      : labelOf(el);
    return role + " " + quote(name) + " [" + refOf(el) + "]" + stateOf(el, role);
  }

  // one table row on one line: each cell's text, and the controls in it inline with their refs
  function rowText(row) {
    return Array.from(row.cells || []).map((cell) => {
      const controls = Array.from(cell.querySelectorAll(CONTROLS));
      if (!controls.length) return cut(clean(cell.innerText !== undefined ? cell.innerText : cell.textContent));
      const words = [];
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (!controls.some((c) => c.contains(node))) words.push(node.data);
      }
      const text = cut(clean(words.join(" ")));
      const shown = controls.map(controlLine).filter(Boolean);
      return [text, ...shown].filter(Boolean).join(" ");
    }).join(" | ");
  }

  // a repeat of the line just before (a duplicated paragraph, a separator row) is not shown again
  function emitNew(depth, text) {
    if (lines.length && lines[lines.length - 1] === "  ".repeat(depth) + "- " + text) return;
    emit(depth, text);
  }

  function walk(parent, depth) {
    let pending = [];
    const flush = () => {
      const text = clean(pending.join(" "));
      pending = [];
      if (text) emitNew(depth, "text: " + quoteText(text));
    };
    for (const node of parent.childNodes) {
      if (truncated) return;
      nodes += 1;
      if (node.nodeType === Node.TEXT_NODE) { pending.push(node.data); continue; }
      if (node.nodeType !== Node.ELEMENT_NODE) continue;
      const el = node;
      if (SKIP.has(el.tagName) || hidden(el)) continue;
      if (el.tagName === "LABEL" && el.control) {
        // the control carries the label as its name: only the control is shown
        flush();
        if (el.contains(el.control)) walkControls([el.control], depth);
        continue;
      }
      const role = roleOf(el);
      if (!role && INLINE.has(el.tagName) && !hasInteractive(el)) { pending.push(el.textContent); continue; }
      flush();
      if (INTERACTIVE.has(role)) {
        const name = role === "link" || role === "button" || role === "tab" || role === "menuitem" || role === "option"
          ? (labelOf(el) || clean(el.innerText || el.textContent) || clean(el.value || ""))
          : labelOf(el);
        emit(depth, role + " " + quote(name) + " [" + refOf(el) + "]" + stateOf(el, role));
        continue;
      }
      if (role === "heading") {
        emit(depth, "heading " + quote(clean(el.innerText || el.textContent)) + " [level=" + el.tagName.slice(1) + "]");
        const inner = el.querySelectorAll("a[href],button,input,select,textarea");
        if (inner.length) walkControls(inner, depth + 1);
        continue;
      }
      if (role === "img" || role === "iframe") { emit(depth, role + " " + quote(labelOf(el))); continue; }
      if (el.tagName === "TR") {
        const text = rowText(el);
        if (text) emitNew(depth, "row: " + text);
        continue;
      }
      const landmark = role || LANDMARK[el.tagName];
      if (landmark) {
        const name = labelOf(el);
        emit(depth, landmark + (name ? " " + quote(name) : "") + ":");
        walk(el, depth + 1);
      } else {
        walk(el, depth);
      }
    }
    flush();
  }

  function walkControls(list, depth) {
    for (const el of list) {
      if (truncated || hidden(el)) continue;
      const role = roleOf(el);
      if (!INTERACTIVE.has(role)) continue;
      const name = role === "link" || role === "button" ? (labelOf(el) || clean(el.innerText || el.textContent)) : labelOf(el);
      emit(depth, role + " " + quote(name) + " [" + refOf(el) + "]" + stateOf(el, role));
    }
  }

  if (document.body) walk(document.body, 0);
  document.documentElement.setAttribute("data-atomic-refs", String(counter));
  return {lines, truncated, nodes, rawChars};
}
