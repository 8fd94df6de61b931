// Parley's embeddable chat widget. Plain JavaScript, no build step: the
// service embeds this file and serves it as it is at /widget.js.
//
//   <script src="https://parley.example/widget.js" data-tenant="acme"
//           data-segment="wholesale" data-widget-key="wk_..." async></script>
//
// (data-segment and data-widget-key are optional; data-api names the API
// when the script is served from elsewhere.)
//
// It defines no global. Everything it shows lives in the shadow root of one
// <parley-widget> element, so the host page's styles and scripts neither
// reach it nor are reached by it. Text from the model or the knowledge base
// never reaches the DOM as HTML: it is rendered with text nodes, and the
// few Markdown forms understood (paragraphs, **bold**, links) are built
// element by element.
//
// When the tenant turned the bot challenge on, and only then, the widget
// loads the challenge's script (Cloudflare Turnstile's, or one offering the
// same explicit-render API) when the chat first opens, and sends a fresh,
// single-use token as captchaToken with every message and form post. The
// challenge's frame sits in one light-DOM child of <parley-widget>, shown
// in the panel through a slot: the provider cannot render in a shadow root.
(() => {
  const script = document.currentScript;
  if (!script || !script.dataset.tenant) return;
  const tenant = script.dataset.tenant;
  const segment = script.dataset.segment || "";
  const widgetKey = script.dataset.widgetKey || "";
  const visitorToken = script.dataset.visitorToken || "";
  // The API's address: data-api when the script comes from a CDN, else the
  // script's own origin.
  const base = script.dataset.api ? new URL(script.dataset.api).origin : new URL(script.src, location.href).origin;
  // data-preview names an element of the page that shows the widget from
  // settings it is handed, instead of the saved ones: the dashboard's live
  // preview. The element's data-settings holds them, and each "parley-preview"
  // event on it shows them again. Nothing is sent or stored in a preview.
  const preview = script.dataset.preview ? document.getElementById(script.dataset.preview) : null;
  const sessionKey = "parley-session-" + tenant + "-" + segment;
  const visitorKey = "parley-visitor-" + tenant;
  const historyKey = "parley-history-" + tenant + "-" + segment;
  const liveKey = "parley-live-" + tenant + "-" + segment;
  const historyMax = 50;

  const css = `
    :host { all: initial; }
    * { box-sizing: border-box; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
    .launcher { position: fixed; right: 20px; bottom: 20px; width: 56px; height: 56px; border-radius: 50%;
      border: none; cursor: pointer; color: var(--on-primary); background: var(--primary); box-shadow: 0 4px 14px rgba(0,0,0,.25);
      z-index: 2147483000; display: grid; place-items: center; }
    .launcher.pulse { animation: pulse 2s 3; }
    @media (prefers-reduced-motion: reduce) { .launcher.pulse { animation: none; } }
    @keyframes pulse { 0% { box-shadow: 0 0 0 0 var(--primary); } 70% { box-shadow: 0 0 0 14px transparent; } 100% { box-shadow: 0 0 0 0 transparent; } }
    .teaser { position: fixed; right: 86px; bottom: 30px; max-width: 240px; background: #fff; color: #111;
      border-radius: 12px; padding: 10px 14px; box-shadow: 0 4px 14px rgba(0,0,0,.2); font-size: 14px; z-index: 2147483000; cursor: pointer; }
    .panel { position: fixed; right: 20px; bottom: 88px; width: 370px; max-width: calc(100vw - 24px);
      height: 560px; max-height: calc(100vh - 110px); display: flex; flex-direction: column; background: #fff; color: #111;
      border-radius: 14px; box-shadow: 0 8px 30px rgba(0,0,0,.3); overflow: hidden; z-index: 2147483000; }
    @media (max-width: 480px) { .panel { right: 0; bottom: 0; width: 100vw; max-width: 100vw; height: 100vh; max-height: 100vh; border-radius: 0; }
      :host(:not(.preview)) .panel:not([hidden]) ~ .launcher { display: none; } }
    :host(.preview) .launcher, :host(.preview) .teaser, :host(.preview) .panel { position: absolute; z-index: 1; }
    :host(.preview) .panel { left: 12px; right: 12px; top: 12px; bottom: 88px; width: auto; max-width: none; height: auto; max-height: none; border-radius: 14px; }
    .avatar { width: 34px; height: 34px; border-radius: 50%; object-fit: cover; flex: none; display: grid; place-items: center;
      font-weight: 600; font-size: 15px; background: var(--avatar-bg); color: var(--on-avatar); }
    .panel[hidden], .teaser[hidden] { display: none; }
    header { background: var(--primary); color: var(--on-primary); padding: 12px 14px; display: flex; align-items: center; gap: 10px; }
    header .who { flex: 1; }
    header .name { font-weight: 600; font-size: 15px; }
    header .title, header .badge { font-size: 12px; }
    header button { background: transparent; border: none; color: var(--on-primary); font-size: 20px; cursor: pointer; }
    .log { flex: 1; overflow-y: auto; padding: 14px; display: flex; flex-direction: column; gap: 10px; background: #f7f7f8; }
    .msg { max-width: 85%; padding: 9px 12px; border-radius: 12px; font-size: 14px; line-height: 1.45; word-wrap: break-word; }
    .msg p { margin: 0 0 6px; } .msg p:last-child { margin: 0; }
    .msg a { color: inherit; text-decoration: underline; }
    .bot { align-self: flex-start; background: #fff; border: 1px solid #e4e4e7; }
    .me { align-self: flex-end; background: var(--primary); color: var(--on-primary); }
    .person { align-self: flex-start; background: #fff; border: 1px solid var(--primary); border-left-width: 4px; }
    .person .author { display: flex; align-items: center; gap: 6px; font-size: 12px; font-weight: 600; margin-bottom: 4px; }
    .person .tag { font-weight: 500; font-size: 11px; background: #e4e4e7; color: #111; border-radius: 999px; padding: 1px 7px; }
    .presence { margin: 0; padding: 6px 14px; font-size: 13px; color: #333; background: #fff; border-bottom: 1px solid #e4e4e7; }
    .presence[hidden] { display: none; }
    .person-typing { margin: 0; padding: 0 14px; font-size: 13px; font-style: italic; color: #555; background: #f7f7f8; }
    .person-typing:not(:empty) { padding: 0 14px 8px; }
    .error { align-self: stretch; background: #fef2f2; color: #991b1b; border: 1px solid #fecaca; }
    .error button { margin-left: 8px; }
    .typing { align-self: flex-start; color: #555; font-size: 13px; }
    .starters { display: flex; flex-wrap: wrap; gap: 6px; }
    .starters button, .votes button, .error button { border: 1px solid #d4d4d8; background: #fff; color: #111; border-radius: 999px;
      padding: 6px 10px; font-size: 13px; cursor: pointer; }
    .votes { display: flex; gap: 4px; margin-top: 4px; }
    .sources { margin-top: 6px; font-size: 12px; color: #52525b; }
    .handover[hidden] { display: none; }
    .handover { margin: 4px auto; border: 1px solid #d4d4d8; background: #fff; color: #111; border-radius: 999px;
      padding: 6px 14px; font: inherit; font-size: 13px; cursor: pointer; }
    .sources a { color: inherit; }
    .votes button { display: inline-grid; place-items: center; }
    .votes button[aria-pressed="true"] { background: var(--primary); color: var(--on-primary); }
    form.compose { display: flex; gap: 8px; padding: 10px; border-top: 1px solid #e4e4e7; background: #fff; }
    .card { align-self: stretch; background: #fff; border: 1px solid #e4e4e7; border-radius: 12px; padding: 10px 12px; font-size: 14px; }
    .card strong { display: block; margin-bottom: 2px; }
    .card small { display: block; color: #555; margin-bottom: 6px; }
    .card label { display: block; font-size: 13px; margin: 6px 0 2px; }
    .card input, .card textarea { width: 100%; border: 1px solid #d4d4d8; border-radius: 8px; padding: 6px 8px; font-size: 14px; color: #111; }
    .card .go { margin-top: 8px; border: none; border-radius: 8px; padding: 7px 12px; background: var(--primary); color: var(--on-primary); cursor: pointer; }
    textarea { flex: 1; resize: none; border: 1px solid #d4d4d8; border-radius: 10px; padding: 8px 10px; font-size: 14px; min-height: 40px; color: #111; }
    form.compose button { border: none; border-radius: 10px; padding: 0 14px; background: var(--primary); color: var(--on-primary); font-size: 14px; cursor: pointer; }
    form.compose button:disabled, .card .go:disabled { opacity: .5; cursor: default; }
    .captcha { padding: 8px 10px 0; background: #fff; border-top: 1px solid #e4e4e7; font-size: 13px; color: #333; }
    .captcha[hidden] { display: none; }
    .captcha p { margin: 4px 0; }
    .captcha p:empty { display: none; }
    .captcha button { margin-left: 8px; border: 1px solid #d4d4d8; background: #fff; color: #111; border-radius: 999px;
      padding: 4px 10px; font-size: 13px; cursor: pointer; }
  `;

  // build gives node its attributes (class, on* listeners, the rest as
  // attributes) and children: el's for an HTML element, svg's for an SVG one.
  const build = (node, attrs, children) => {
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "class") node.setAttribute("class", v);
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c);
    return node;
  };
  const el = (tag, attrs = {}, ...children) => build(document.createElement(tag), attrs, children);
  const svg = (tag, attrs = {}, ...children) => build(document.createElementNS("http://www.w3.org/2000/svg", tag), attrs, children);

  // icon is an inline SVG of path d, drawn in the text's colour: the
  // launcher and the votes need no emoji font, which not every visitor's
  // system has (without one, an emoji shows as an empty box). turn rotates
  // it half a turn (thumbs down is thumbs up turned over).
  const icon = (d, size, turn = false) => svg("svg", { viewBox: "0 0 24 24", width: size, height: size, fill: "none",
    stroke: "currentColor", "stroke-width": "2", "stroke-linecap": "round", "stroke-linejoin": "round", "aria-hidden": "true",
    focusable: "false" }, svg("path", turn ? { d, transform: "rotate(180 12 12)" } : { d }));
  const bubbleIcon = "M4 4h16a1 1 0 0 1 1 1v11a1 1 0 0 1-1 1H10l-5 4v-4H4a1 1 0 0 1-1-1V5a1 1 0 0 1 1-1z";
  const thumbIcon = "M3 10h4v11H3zM7 10l4-8a2 2 0 0 1 2 2v4h5.5a2 2 0 0 1 2 2.3L19 19a2 2 0 0 1-2 2H7";

  // Markdown, safely: paragraphs, **bold** and links (http and https only),
  // each made of elements and text nodes.
  const inline = (text) => {
    const out = [];
    const re = /\*\*([^*]+)\*\*|\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;
    let last = 0;
    for (const m of text.matchAll(re)) {
      if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
      if (m[1] !== undefined) out.push(el("strong", {}, m[1]));
      else {
        const href = m[3] || m[4];
        out.push(el("a", { href, target: "_blank", rel: "noopener noreferrer" }, m[2] || m[4]));
      }
      last = m.index + m[0].length;
    }
    if (last < text.length) out.push(document.createTextNode(text.slice(last)));
    return out;
  };
  const render = (node, text) => {
    node.replaceChildren(...text.split(/\n{2,}/).filter((p) => p.trim()).map((p) => {
      const para = el("p");
      p.split("\n").forEach((line, i) => { if (i) para.append(el("br")); para.append(...inline(line)); });
      return para;
    }));
  };

  // The session id is kept in the host page's localStorage, so the
  // conversation goes on across its pages and visits.
  // onColour is the text colour, white or near black, that reads best on a
  // background colour given as #rgb or #rrggbb (WCAG relative luminance).
  const onColour = (hex) => {
    let h = String(hex).replace("#", "");
    if (h.length === 3) h = [...h].map((c) => c + c).join("");
    if (!/^[0-9a-f]{6}$/i.test(h)) return "#fff";
    const lin = (i) => { const c = parseInt(h.slice(i, i + 2), 16) / 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    const l = 0.2126 * lin(0) + 0.7152 * lin(2) + 0.0722 * lin(4);
    return (l + 0.05) / 0.05 > 1.05 / (l + 0.05) ? "#111" : "#fff";
  };

  const sessionId = () => {
    let id = null;
    try { id = localStorage.getItem(sessionKey); } catch { /* storage off */ }
    if (!id) {
      id = "w-" + crypto.randomUUID();
      try { localStorage.setItem(sessionKey, id); } catch { /* storage off */ }
    }
    return id;
  };

  // The anonymous id: "anon_" and 128 random bits in hex, made once per
  // browser and tenant, kept in the host page's localStorage and sent with
  // every message, so that what the bot remembers of this visitor comes back
  // in later conversations on this browser. Where storage is blocked it
  // lasts as long as the page. It proves only that the storage is the same,
  // never who the visitor is: a signed-in visitor is named by the site's
  // visitor token, which wins and takes over what was remembered.
  let anonymous = "";
  const anonymousId = () => {
    let id = "";
    try { id = localStorage.getItem(visitorKey) || ""; } catch { /* storage off */ }
    if (!/^anon_[0-9a-f]{32}$/.test(id)) {
      id = anonymous || "anon_" + Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
      try { localStorage.setItem(visitorKey, id); } catch { /* storage off: kept for the page's life */ }
    }
    return (anonymous = id);
  };

  // The conversation as shown, kept beside the session id so that another
  // page of the site shows it again: [{r: "me"|"bot"|"person", t: text,
  // id?, n?, s?}] (a bot's id is its answer's, for the votes, s its sources; a person's, their
  // message's, n their name).
  const history = {
    load() { try { return JSON.parse(localStorage.getItem(historyKey)) || []; } catch { return []; } },
    add(entry) {
      try {
        const h = history.load().concat(entry).slice(-historyMax);
        localStorage.setItem(historyKey, JSON.stringify(h));
      } catch { /* storage off or full */ }
    },
  };

  // The conversation's live state, beside its history: the last status
  // the chat or the stream told ("bot", "escalated", "human", "closed"),
  // the person's name, the stream's token and the id of the last person's
  // message received, from which a stream opened on another page resumes.
  const liveState = {
    load() { try { return JSON.parse(localStorage.getItem(liveKey)) || {}; } catch { return {}; } },
    save(v) { try { localStorage.setItem(liveKey, JSON.stringify(v)); } catch { /* storage off: kept for the page's life */ } },
  };

  const headers = () => {
    const h = { "Content-Type": "application/json" };
    if (widgetKey) h["X-Widget-Key"] = widgetKey;
    return h;
  };

  // problem turns a refused answer into words for the visitor.
  const problem = async (resp) => {
    let body = {};
    try { body = await resp.json(); } catch { /* not JSON */ }
    if (resp.status === 429 && resp.headers.get("Retry-After")) {
      return "Too many messages for now: please wait " + resp.headers.get("Retry-After") + " seconds and try again.";
    }
    if (body.code === "CAPTCHA_FAILED" || body.code === "CAPTCHA_REQUIRED") {
      return "We could not confirm that you are not a robot. Please try again.";
    }
    return body.error || "The assistant is not available right now.";
  };

  // challenge drives the bot challenge in box, an element of the host page,
  // through the explicit-render API (turnstile.render, turnstile.reset). The
  // script is added once; tokens are single-use, so take() hands one out and
  // at once asks the provider for the next. changed(state) hears "ready",
  // "waiting" and "error".
  const challenge = (cfg, box, changed) => {
    let id, token = "", loading = false;
    const waiters = [];
    const tell = (state) => changed(state || (token ? "ready" : "waiting"));
    const hand = (resolve, t) => { token = ""; resolve(t); window.turnstile.reset(id); tell(); };
    const draw = () => {
      loading = false;
      id = window.turnstile.render(box, { sitekey: cfg.siteKey,
        callback: (t) => { const w = waiters.shift(); if (w) hand(w, t); else { token = t; tell(); } },
        "expired-callback": () => { token = ""; tell(); },
        "error-callback": () => { token = ""; tell("error"); return true; } });
      tell();
    };
    const load = () => {
      if (loading || id !== undefined) return;
      if (window.turnstile) { draw(); return; }
      loading = true; tell();
      const tag = document.createElement("script");
      tag.src = cfg.scriptUrl; tag.async = true;
      tag.onload = () => { if (window.turnstile) draw(); else { loading = false; tell("error"); } };
      tag.onerror = () => { loading = false; tag.remove(); tell("error"); };
      document.head.append(tag);
    };
    return {
      start: load,
      retry() { if (id === undefined) load(); else { token = ""; window.turnstile.reset(id); tell(); } },
      ready: () => !!token,
      take() { load(); return new Promise((resolve) => { if (token) hand(resolve, token); else waiters.push(resolve); }); },
    };
  };

  async function start() {
    if (preview) {
      const show = () => { try { mount(JSON.parse(preview.dataset.settings), ""); } catch (err) { console.warn("Parley preview:", err); } };
      preview.addEventListener("parley-preview", show);
      show();
      return;
    }
    const q = segment ? "?segment=" + encodeURIComponent(segment) : "";
    const resp = await fetch(base + "/chat/" + encodeURIComponent(tenant) + "/widget" + q,
      { headers: widgetKey ? { "X-Widget-Key": widgetKey } : {} });
    let s, refused = "";
    if (resp.ok) s = await resp.json();
    else {
      // Shown to whoever opens the chat, so that the site's owner sees why.
      refused = await problem(resp);
      console.warn("Parley widget:", refused);
      s = { name: "Chat", segment: { welcomeMessage: null, conversationStarters: [] }, bot: { primaryColor: "#52525b" },
        launcher: {}, bookingCta: null, form: null, endpoints: {} };
    }
    mount(s, refused);
  }

  // avatar is the bot's picture (an http(s) or data:image address), else its
  // initial on the avatar colour.
  const avatar = (s) => {
    const src = s.bot.avatar || "";
    if (/^(https?:|data:image\/)/i.test(src)) return el("img", { class: "avatar", src, alt: "" });
    const name = s.bot.name || s.name || "?";
    return el("div", { class: "avatar", "aria-hidden": "true" }, [...name][0].toUpperCase());
  };

  // mount shows the widget for settings s; in a preview it replaces the one
  // shown before, opened, with the teaser beside it.
  let mounted = null;
  function mount(s, refused) {
    if (mounted) mounted.remove();
    const host = document.createElement("parley-widget");
    mounted = host;
    const root = host.attachShadow({ mode: "open" });
    const primary = s.bot.primaryColor || "#2563eb";
    host.style.setProperty("--primary", primary);
    host.style.setProperty("--on-primary", onColour(primary));
    const avatarBg = s.bot.avatarBackground || s.bot.secondaryColor || "#ffffff";
    host.style.setProperty("--avatar-bg", avatarBg);
    host.style.setProperty("--on-avatar", onColour(avatarBg));
    root.append(el("style", {}, css));

    const log = el("div", { class: "log", role: "log", "aria-live": "polite", "aria-label": "Conversation" });
    const input = el("textarea", { rows: "1", "aria-label": "Your message", placeholder: "Write a message…", maxlength: "15000" });
    const send = el("button", { type: "submit" }, "Send");
    const form = el("form", { class: "compose" }, input, send);
    const close = el("button", { type: "button", "aria-label": "Close chat" }, "×");
    const who = el("div", { class: "who" }, el("div", { class: "name" }, s.bot.name || s.name));
    if (s.bot.title) who.append(el("div", { class: "title" }, s.bot.title));
    if (s.bot.showAiBadge) who.append(el("div", { class: "badge" }, "AI assistant"));
    const note = el("p", { role: "status" });
    // The presence line: whether a person is awaited or answers.
    const presence = el("p", { class: "presence", role: "status", hidden: "" });
    // The line under the conversation that tells a person is typing; it is
    // always there (empty when nobody types) so that its changes are read.
    const personTyping = el("p", { class: "person-typing", role: "status" });
    const checkRow = el("div", { class: "captcha", hidden: "" }, el("slot", { name: "captcha" }), note);
    const handover = el("button", { type: "button", class: "handover", hidden: "" }, "Talk to a person");
    const panel = el("section", { class: "panel", role: "dialog", "aria-label": "Chat with " + (s.bot.name || s.name), hidden: "" },
      el("header", {}, avatar(s), who, close), presence, log, personTyping, checkRow, handover, form);
    const launcher = el("button", { class: "launcher" + (s.launcher.bubblePulse ? " pulse" : ""), "aria-label": "Open chat",
      "aria-expanded": "false" }, icon(bubbleIcon, 26));
    const teaser = el("div", { class: "teaser", hidden: "" }, s.launcher.teaserText || "");
    root.append(teaser, panel, launcher);

    // The bot challenge, when on (never in a preview, which sends nothing):
    // its frame in a light-DOM child of the host element, slotted into the
    // panel above the message field.
    let busy = false;
    let check = null;
    const sync = () => { send.disabled = busy || !!refused || !!preview || (check !== null && !check.ready()); };
    if (s.captcha && !preview) {
      const box = el("div", { slot: "captcha" });
      host.append(box);
      checkRow.hidden = false;
      const again = el("button", { type: "button" }, "Retry");
      again.addEventListener("click", () => check.retry());
      check = challenge(s.captcha, box, (state) => {
        if (state === "error") note.replaceChildren("The check that you are not a robot could not load.", again);
        else note.replaceChildren(state === "waiting" ? "Checking that you are not a robot…" : "");
        sync();
      });
      sync();
    }

    const open = () => {
      if (check) check.start();
      panel.hidden = false; teaser.hidden = true;
      launcher.setAttribute("aria-expanded", "true");
      input.focus();
      follow();
    };
    const shut = () => { panel.hidden = true; launcher.setAttribute("aria-expanded", "false"); launcher.focus(); unfollow(); };
    launcher.addEventListener("click", () => (panel.hidden ? open() : shut()));
    close.addEventListener("click", shut);
    teaser.addEventListener("click", open);
    const delay = Math.max(0, s.launcher.autoOpenDelay || 0) * 1000;
    if (preview) {
      host.classList.add("preview");
      panel.hidden = false; launcher.setAttribute("aria-expanded", "true");
      teaser.hidden = !s.launcher.teaserText;
      input.disabled = true; send.disabled = true;
      input.placeholder = "Visitors write here";
    } else if (s.launcher.autoOpen) setTimeout(() => { if (panel.hidden) open(); }, delay);
    else if (s.launcher.teaserText) setTimeout(() => { if (panel.hidden) teaser.hidden = false; }, delay);

    const bubble = (cls, text) => {
      const b = el("div", { class: "msg " + cls });
      render(b, text);
      log.append(b);
      log.scrollTop = log.scrollHeight;
      return b;
    };
    if (refused) {
      log.append(el("div", { class: "msg error", role: "alert" }, refused));
      input.disabled = true; send.disabled = true;
    }
    if (s.segment.welcomeMessage) bubble("bot", s.segment.welcomeMessage);
    if (s.bookingCta) {
      const b = s.bookingCta;
      const card = el("div", { class: "card booking" }, el("strong", {}, b.headline));
      if (b.subtitle) card.append(el("small", {}, b.subtitle));
      if (b.officeHours) card.append(el("small", {}, b.officeHours));
      card.append(el("button", { type: "button", class: "go", onclick: () => ask(b.ctaText || b.headline) }, b.ctaText || "Book"));
      log.append(card);
    }
    if (s.form) log.append(leadForm(s.form));
    // sources is the line under an answer naming the knowledge-base
    // entries it cites: links to their pages (http and https only; the
    // test chat also names an entry without one).
    const sources = (node, list) => {
      const line = el("div", { class: "sources" }, "Sources: ");
      list.forEach((src, i) => {
        if (i) line.append(", ");
        line.append(/^https?:\/\//i.test(src.url || "")
          ? el("a", { href: src.url, target: "_blank", rel: "noopener noreferrer" }, src.title)
          : document.createTextNode(src.title));
      });
      node.append(line);
    };
    const votes = (node, messageId) => {
      const up = el("button", { type: "button", "aria-label": "Helpful", "aria-pressed": "false" }, icon(thumbIcon, 14));
      const down = el("button", { type: "button", "aria-label": "Not helpful", "aria-pressed": "false" }, icon(thumbIcon, 14, true));
      up.dataset.value = "up"; down.dataset.value = "down";
      up.addEventListener("click", () => vote(messageId, "up", [up, down]));
      down.addEventListener("click", () => vote(messageId, "down", [up, down]));
      node.append(el("div", { class: "votes" }, up, down));
    };
    // A person's message: their name and a "Person" tag above it, in a
    // bubble of its own style, so that the visitor knows who writes.
    const personBubble = (name, text) => {
      const b = el("div", { class: "msg person" }, el("div", { class: "author" }, name || "Support", el("span", { class: "tag" }, "Person")));
      const body = el("div");
      render(body, text);
      b.append(body);
      log.append(b);
      log.scrollTop = log.scrollHeight;
    };
    const past = refused || preview ? [] : history.load();
    const shown = new Set(); // the people's messages shown, by id
    for (const m of past) {
      if (m.r === "person") {
        personBubble(m.n, m.t);
        if (m.id) shown.add(m.id);
        continue;
      }
      const node = bubble(m.r === "me" ? "me" : "bot", m.t);
      if (m.s) sources(node, m.s);
      if (m.id) votes(node, m.id);
    }

    // The live part: while a person is awaited or answers, an EventSource
    // on the session's stream brings their messages and the changes of
    // status, only while the panel is open. It resumes after the last
    // message received (lastEventId on opening, Last-Event-ID when the
    // browser reconnects by itself), and a message already shown is never
    // shown again.
    let live = refused || preview ? {} : liveState.load();
    let source = null, retry = null, retryDelay = 1000;
    const awaited = (st) => st === "escalated" || st === "human";
    // Without a language model (s.handover), the way to a person: the
    // visitor's request in the chat, which the hand-over tool answers, or
    // the lead form. Hidden while a person is awaited or answers.
    const showHandover = () => { handover.hidden = !s.handover || !!preview || !!refused || awaited(live.status); };
    handover.addEventListener("click", () => {
      if (s.handover === "chat") { ask("I'd like to talk to a person"); return; }
      const lead = log.querySelector("form.lead") || log.appendChild(leadForm(s.form));
      lead.scrollIntoView({ block: "nearest" });
      const first = lead.querySelector("input, textarea, select");
      if (first) first.focus();
    });
    showHandover();
    const showPresence = (st, name, was) => {
      let text = "";
      if (st === "escalated") text = "Waiting for a person…";
      else if (st === "human") text = (name || "A person") + " joined the conversation";
      else if (awaited(was) && st === "closed") text = "The conversation has ended";
      else if (awaited(was)) text = "The assistant is back";
      presence.textContent = text;
      presence.hidden = !text;
    };
    const setStatus = (st, name, token) => {
      const was = live.status, who = live.assignee;
      live = { ...live, status: st, assignee: name || null };
      if (token) live.token = token;
      liveState.save(live);
      if (st !== was || (name || null) !== who) showPresence(st, name, was);
      showHandover();
      if (awaited(st)) follow(); else unfollow();
    };
    // A person typing shows until their message comes, or 5 seconds after
    // the stream's last word of it (it repeats it every 3 s while they type).
    let typingTimer = null;
    const stopTyping = () => { clearTimeout(typingTimer); personTyping.textContent = ""; };
    const personTypes = (name) => {
      personTyping.textContent = (name || "A person") + " is typing…";
      clearTimeout(typingTimer);
      typingTimer = setTimeout(stopTyping, 5000);
    };
    const personSaid = (d, eventId) => {
      stopTyping();
      if (eventId) { live.last = eventId; liveState.save(live); }
      if (!d.id || shown.has(d.id)) return;
      shown.add(d.id);
      personBubble(d.authorName, d.content);
      history.add({ r: "person", t: d.content, n: d.authorName, id: d.id });
    };
    function follow() {
      if (source || preview || refused || panel.hidden || !live.token || !awaited(live.status)) return;
      clearTimeout(retry);
      let url = s.endpoints.chat + "/stream?sessionId=" + encodeURIComponent(sessionId()) + "&token=" + encodeURIComponent(live.token);
      if (live.last) url += "&lastEventId=" + encodeURIComponent(live.last);
      if (widgetKey) url += "&widgetKey=" + encodeURIComponent(widgetKey);
      const es = new EventSource(url);
      source = es;
      es.addEventListener("open", () => { retryDelay = 1000; });
      es.addEventListener("status", (e) => { const d = JSON.parse(e.data); setStatus(d.status, d.assignee); });
      es.addEventListener("message", (e) => personSaid(JSON.parse(e.data), e.lastEventId));
      es.addEventListener("typing", (e) => personTypes(JSON.parse(e.data).name));
      es.addEventListener("error", () => {
        // A dropped stream is reconnected by the browser itself; one it
        // gave up on (refused, or the network down) is opened again here,
        // later each time.
        if (es.readyState !== EventSource.CLOSED || source !== es) return;
        source = null;
        retry = setTimeout(follow, retryDelay);
        retryDelay = Math.min(retryDelay * 2, 30000);
      });
    }
    function unfollow() {
      stopTyping();
      clearTimeout(retry);
      if (source) { source.close(); source = null; }
    }
    if (awaited(live.status)) {
      showPresence(live.status, live.assignee);
      // A person is awaited or answers: the conversation stays in view
      // from page to page.
      if (!preview && !refused) open();
    }
    let starters = null;
    if (!past.length && s.segment.conversationStarters.length) {
      starters = el("div", { class: "starters" }, ...s.segment.conversationStarters.map((st) =>
        el("button", { type: "button", onclick: () => ask(st.text) }, (st.emoji ? st.emoji + " " : "") + st.text)));
      log.append(starters);
    }

    const vote = (messageId, value, buttons) => {
      fetch(s.endpoints.feedback, { method: "POST", headers: headers(),
        body: JSON.stringify({ sessionId: sessionId(), messageId, value, widgetKey: widgetKey || undefined }) })
        .then((r) => { if (r.ok) buttons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.value === value))); });
    };

    // leadForm is the segment's form, posted to /form/{slug} (channel form).
    function leadForm(f) {
      const fields = f.fields.map((fd) => {
        const id = "pf-" + fd.name;
        const input = fd.type === "textarea" ? el("textarea", { id, name: fd.name, rows: "2" })
          : el("input", { id, name: fd.name, type: fd.type === "phone" ? "tel" : fd.type === "email" ? "email" : "text" });
        if (fd.required) input.required = true;
        return [el("label", { for: id }, fd.label + (fd.required ? " *" : "")), input];
      }).flat();
      const go = el("button", { type: "submit", class: "go" }, "Send");
      go.disabled = !!preview;
      const card = el("form", { class: "card lead", "aria-label": "Contact form" }, ...fields, go);
      card.addEventListener("submit", async (e) => {
        e.preventDefault();
        go.disabled = true;
        const values = {};
        for (const fd of f.fields) {
          const v = card.elements[fd.name].value.trim();
          if (v) values[fd.name] = v;
        }
        try {
          const captchaToken = check ? await check.take() : undefined;
          const r = await fetch(s.endpoints.form, { method: "POST", headers: headers(), body: JSON.stringify({
            segment: segment || undefined, fields: values, pageUrl: location.href, widgetKey: widgetKey || undefined, captchaToken }) });
          if (!r.ok) { go.disabled = false; log.append(el("div", { class: "msg error", role: "alert" }, await problem(r))); return; }
          const body = await r.json();
          card.replaceWith(el("div", { class: "msg bot", role: "status" }, f.confirmationMessage || body.message || "Thank you!"));
        } catch {
          go.disabled = false;
          log.append(el("div", { class: "msg error", role: "alert" }, "The connection was lost. Check your network and retry."));
        }
      });
      return card;
    }

    async function ask(text) {
      text = text.trim();
      if (!text || busy || preview) return;
      busy = true; sync();
      if (starters) { starters.remove(); starters = null; }
      bubble("me", text);
      history.add({ r: "me", t: text });
      const typing = el("div", { class: "typing", "aria-label": "The assistant is writing" }, "…");
      log.append(typing);
      let answer = null, said = "";
      const fail = (msg) => {
        typing.remove();
        const retry = el("button", { type: "button" }, "Retry");
        const e = el("div", { class: "msg error", role: "alert" }, msg, retry);
        retry.addEventListener("click", () => { e.remove(); ask(text); });
        log.append(e);
        log.scrollTop = log.scrollHeight;
      };
      try {
        const captchaToken = check ? await check.take() : undefined;
        const resp = await fetch(s.endpoints.chat, { method: "POST", headers: headers(), body: JSON.stringify({
          message: text, sessionId: sessionId(), segment: segment || undefined, pageUrl: location.href,
          pageContext: { title: document.title, url: location.href },
          visitorToken: visitorToken || undefined, anonymousId: anonymousId(), widgetKey: widgetKey || undefined, captchaToken }) });
        if (!resp.ok) { fail(await problem(resp)); return; }
        const reader = resp.body.getReader();
        const decoder = new TextDecoder();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += decoder.decode(value, { stream: true });
          let cut;
          while ((cut = buf.indexOf("\n\n")) >= 0) {
            const frame = buf.slice(0, cut); buf = buf.slice(cut + 2);
            for (const line of frame.split("\n")) {
              if (!line.startsWith("data: ")) continue;
              const ev = JSON.parse(line.slice(6));
              if (ev.error) { fail(ev.error); return; }
              if (ev.text) {
                if (!answer) { typing.remove(); answer = bubble("bot", ""); }
                said += ev.text;
                render(answer, said);
                log.scrollTop = log.scrollHeight;
              }
              if (ev.done) {
                typing.remove();
                // While a person is awaited or answers the assistant says
                // nothing: no empty bubble.
                if (!answer && ev.message) answer = bubble("bot", ev.message);
                const cited = ev.sources && ev.sources.length ? ev.sources : undefined;
                if (answer) history.add({ r: "bot", t: said || ev.message || "", id: ev.messageId || undefined, s: cited });
                if (answer && cited) sources(answer, cited);
                if (answer && ev.messageId) votes(answer, ev.messageId);
                if (ev.status) setStatus(ev.status, ev.assignee, ev.streamToken);
              }
            }
          }
        }
      } catch (err) {
        console.warn("Parley widget:", err);
        fail("The connection was lost. Check your network and retry.");
      } finally {
        typing.remove();
        busy = false; sync();
      }
    }
    form.addEventListener("submit", (e) => { e.preventDefault(); const t = input.value; input.value = ""; typedAt = 0; ask(t); });
    // While a person is awaited or answers, the team sees the visitor
    // typing: the box tells the server at most every 3 seconds (it keeps a
    // signal 5 seconds). The assistant needs no such word.
    let typedAt = 0;
    input.addEventListener("input", () => {
      if (preview || refused || !live.token || !awaited(live.status) || !input.value.trim()) return;
      const now = Date.now();
      if (now - typedAt < 3000) return;
      typedAt = now;
      fetch(s.endpoints.chat + "/typing", { method: "POST", headers: headers(),
        body: JSON.stringify({ sessionId: sessionId(), token: live.token, widgetKey: widgetKey || undefined }) })
        .catch(() => { /* a lost signal only hides the line sooner */ });
    });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
    });
    (preview || document.body).append(host);
  }

  if (document.readyState === "complete") start();
  else addEventListener("load", start, { once: true });
})();
