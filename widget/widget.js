// Parley's embeddable chat widget. Plain JavaScript, no build step: the
// service embeds this file and serves it as it is at /widget.js.
//
//   <script src="https://parley.example/widget.js" data-tenant="acme"
//           data-segment="wholesale" data-widget-key="wk_..." async></script>
//
// (data-segment and data-widget-key are optional; data-api names the API
// when the script is served from elsewhere; data-launcher="none" leaves the
// opening to the site's own button, through the API below.)
//
// It speaks the language of data-locale (en, fr-CA...), else the page's
// <html lang>, else the browser's (see Languages), right to left in Arabic
// and Hebrew, and sends that locale with every message.
//
// Its one global is Parley, the page's API (see "Scripting the widget"
// below); a preview defines none. Everything it shows lives in the shadow root of one
// <parley-widget> element, so the host page's styles and scripts neither
// reach it nor are reached by it. Text from the model or the knowledge base
// never reaches the DOM as HTML: it is rendered with text nodes, and the
// few Markdown forms understood (paragraphs, lists, code, bold, italics,
// links) are built element by element.
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
  let visitorToken = script.dataset.visitorToken || ""; // identify() changes it
  // The API's address: data-api when the script comes from a CDN, else the
  // script's own origin.
  const base = script.dataset.api ? new URL(script.dataset.api).origin : new URL(script.src, location.href).origin;
  // data-preview names an element of the page that shows the widget from
  // settings it is handed, instead of the saved ones: the dashboard's live
  // preview. The element's data-settings holds them, and each "parley-preview"
  // event on it shows them again. Nothing is sent or stored in a preview,
  // unless it names the dashboard's test chat (data-test-chat, below).
  const preview = script.dataset.preview ? document.getElementById(script.dataset.preview) : null;

  // ---- Scripting the widget, and the dashboard's chats (issue 38) ----
  //
  // The page's API is one global, Parley, defined by the live widget only
  // (never by a preview). Each method is also a call by name: Parley.open()
  // is Parley("open"). Before this script has loaded, the embed snippet's
  // stub (README, "Script the widget") queues both forms in Parley.q; they
  // run in order once it has, and those that need the panel (open, close,
  // toggle, send) once it shows. A second copy of the script is ignored.
  // data-launcher="none" shows no launcher: the site's own button opens it.
  //
  // The dashboard's chats: a preview element with data-test-chat (the test
  // chat endpoint's address, with data-csrf) sends to it as the owner, in
  // a session of its own (data-session-prefix) kept in storage apart from
  // a visitor's, and shows under each answer what the bot used. With
  // data-mode="inline" the panel fills the element, without a launcher.
  // dashText is the dashboard's words (the owner's, never a visitor's).
  const dashText = { used: "What the bot used", given: "Knowledge base entries it was given",
    none: "None: the knowledge base has no entry for this segment and language.", ran: "Tools it ran", noTools: "None.",
    untitled: "Untitled entry", summary: "summary only", cited: "cited in the answer", worked: "worked", failed: "failed",
    io: "What it was asked and what it returned", asked: "Asked", returned: "Returned", nothing: "nothing",
    improve: "Improve this answer" };
  const dash = preview && preview.dataset.testChat ? { url: preview.dataset.testChat, csrf: preview.dataset.csrf || "",
    prefix: preview.dataset.sessionPrefix || "test-", inline: preview.dataset.mode === "inline" } : null;
  const mute = preview && !dash; // a preview that sends nothing
  const ns = dash ? "parley-test-" : "parley-";
  const noLauncher = script.dataset.launcher === "none";
  const randomHex = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  const events = { open: [], close: [], message: [], lead: [], escalated: [] };
  const waiting = []; // calls that wait for the panel
  let widget = null; // the shown widget's controls
  let opener = null; // what had the focus when the panel opened without a launcher
  // emit tells the page's listeners, after the widget's own work and apart
  // from it: a listener that throws breaks nothing here.
  const emit = (name, data) => setTimeout(() => {
    for (const fn of events[name].slice()) {
      try { fn(data); } catch (err) { console.warn("Parley listener:", err); }
    }
  });
  const call = (name, args) => {
    if (name === "on" || name === "off") {
      const [ev, fn] = args;
      if (!events[ev] || typeof fn !== "function") { console.warn("Parley." + name + ": unknown event or no function:", ev); return; }
      events[ev] = events[ev].filter((f) => f !== fn);
      if (name === "on") events[ev].push(fn);
    } else if (name === "identify") {
      const token = args[0] && args[0].visitorToken;
      visitorToken = typeof token === "string" ? token : "";
    } else if (!["open", "close", "toggle", "send"].includes(name)) console.warn("Parley: no such method:", name);
    else if (widget) return widget[name](...args);
    else waiting.push([name, args]);
  };
  if (!preview) {
    const prior = window.Parley;
    if (prior && prior.parley) { console.warn("Parley widget: the script is on this page twice; the second copy is ignored."); return; }
    const api = (name, ...args) => call(name, args);
    for (const m of ["open", "close", "toggle", "send", "identify", "on", "off"]) api[m] = (...args) => call(m, args);
    api.parley = true;
    window.Parley = api;
    for (const args of (prior && prior.q) || []) api(...args);
  }
  // toggled hears the panel open or close (changed: it was the other way):
  // without a launcher, the focus goes back to the site's own button.
  const toggled = (opening, changed) => {
    if (!changed || preview) return;
    if (opening) opener = document.activeElement;
    else if (noLauncher && opener && opener.focus) opener.focus();
    emit(opening ? "open" : "close", {});
  };
  // bind hands the API the shown widget's controls, then runs the calls
  // that waited. send opens the panel and asks as the visitor would, after
  // any answer still coming; its promise settles with the answer.
  const bind = (panel, open, shut, ask, busy) => {
    let chain = Promise.resolve();
    widget = {
      open() { if (panel.hidden) open(); },
      close() { if (!panel.hidden) shut(); },
      toggle() { if (panel.hidden) open(); else shut(); },
      send(text) {
        if (typeof text !== "string" || !text.trim()) return Promise.resolve();
        if (panel.hidden) open();
        return (chain = chain.then(async () => {
          while (busy()) await new Promise((r) => setTimeout(r, 200));
          await ask(text);
        }));
      },
    };
    for (const [name, args] of waiting.splice(0)) widget[name](...args);
  };
  // answered hears each complete answer.
  const answered = (ev, answer, said) => {
    if (answer && !preview) emit("message", { text: said || ev.message || "", role: "assistant", id: ev.messageId || null });
    if (!preview && (ev.toolExecutions || []).some((x) => x.type === "SUBMIT_FORM" && x.success)) {
      emit("lead", { source: "chat", conversationId: ev.conversationId || null });
    }
    if (dash && answer) used(answer, usedOf(ev));
  };
  const apiCss = `
    :host(.no-launcher) .panel { bottom: 20px; }
    :host(.inline) { display: block; height: 100%; }
    :host(.inline) .panel { position: static; width: 100%; max-width: none; height: 100%; max-height: none;
      border-radius: 12px; box-shadow: none; border: 1px solid #d4d4d8; }
    .used { margin-top: 6px; font-size: 13px; }
    .used summary { cursor: pointer; color: #1d4ed8; }
    .used p { margin: 6px 0 2px; } .used ul { margin: 0; padding-left: 18px; }
    .used a, a.improve { color: #1d4ed8; } a.improve { display: inline-block; margin-top: 4px; font-size: 13px; }
    .used .tag { margin-left: 6px; font-size: 11px; border-radius: 999px; padding: 1px 7px; background: #e4e4e7; color: #111; }
    .used .ok { background: #dcfce7; color: #14532d; } .used .bad { background: #fee2e2; color: #7f1d1d; }
    .used pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; background: #f4f4f5; color: #111;
      padding: 6px; border-radius: 6px; max-height: 200px; overflow: auto; margin: 2px 0; }
  `;
  // apiMount finishes a widget being drawn: no launcher for data-launcher
  // none or an inline chat (nor a close button there).
  const apiMount = (host, launcher, teaser, close) => {
    const inline = dash && dash.inline;
    host.shadowRoot.append(el("style", {}, apiCss));
    if (!noLauncher && !inline) return;
    launcher.remove(); teaser.remove();
    host.classList.add(inline ? "inline" : "no-launcher");
    if (inline) close.hidden = true;
  };
  // forget starts the dashboard's test conversation over.
  const forget = () => {
    for (const k of [sessionKey, historyKey, liveKey]) { try { localStorage.removeItem(k); } catch { /* storage off */ } }
  };
  // usedOf is what the test chat's done event says the bot used; used
  // shows it, folded, under the answer (the dashboard only: tool results
  // are the owner's to see).
  // c and m (the conversation and the answer) make "Improve this answer" a
  // link to the dashboard's form, which returns to the test chat.
  const usedOf = (ev) => ({ knowledge: ev.knowledge || [], tools: ev.tools || [], c: ev.conversationId, m: ev.messageId });
  const pretty = (v) => { if (v === undefined || v === null) return dashText.nothing; try { return JSON.stringify(v, null, 2); } catch { return String(v); } };
  function used(node, u) {
    const t = dashText;
    const d = el("details", { class: "used" }, el("summary", {}, t.used), el("p", {}, el("strong", {}, t.given)));
    if (!u.knowledge.length) d.append(el("p", {}, t.none));
    else d.append(el("ul", {}, ...u.knowledge.map((k) => el("li", {}, el("a", { href: base + "/admin/corpus/" + encodeURIComponent(k.id), target: "_top" }, k.title || t.untitled),
      ...(k.cited ? [el("span", { class: "tag ok" }, t.cited)] : []),
      ...(k.summarized ? [el("span", { class: "tag" }, t.summary)] : [])))));
    d.append(el("p", {}, el("strong", {}, t.ran)));
    if (!u.tools.length) d.append(el("p", {}, t.noTools));
    else d.append(el("ul", {}, ...u.tools.map((x) => el("li", {}, el("strong", {}, x.name || ""),
      el("span", { class: "tag " + (x.success ? "ok" : "bad") }, x.success ? t.worked : t.failed),
      ...(x.summary ? [el("div", {}, x.summary)] : []),
      el("details", {}, el("summary", {}, t.io), el("div", {}, t.asked), el("pre", {}, pretty(x.input)),
        el("div", {}, t.returned), el("pre", {}, pretty(x.result)))))));
    node.append(d);
    if (u.c && u.m) node.append(el("a", { class: "improve", target: "_top", href: base + "/admin/conversations/" + encodeURIComponent(u.c) +
      "/messages/" + encodeURIComponent(u.m) + "/correction?back=test-chat" }, t.improve));
  }
  // ---- end of the scripting section ----
  const sessionKey = ns + "session-" + tenant + "-" + segment;
  const visitorKey = ns + "visitor-" + tenant;
  const historyKey = ns + "history-" + tenant + "-" + segment;
  const liveKey = ns + "live-" + tenant + "-" + segment;
  const leadKey = ns + "lead-" + tenant + "-" + segment;
  const historyMax = 50;

  // ---- Languages ----
  // The widget's own words, by language. The owner's texts (the bot's name,
  // the welcome, the starters, the form's labels) are shown as written. The
  // language is data-locale's, else the page's <html lang>, else the
  // browser's; a language missing here reads English, and a word missing in
  // a language reads its English. tr(key, arg) is the word, with "%s"
  // replaced by arg (as it is: a name may hold "$&"). The locale "qps" (tests only) wraps each English word
  // in ⟦ ⟧, so that a test sees any visible word not taken from here.
  const words = {
    en: { open: "Open chat", close: "Close chat", chatWith: "Chat with %s", chat: "Chat", ai: "AI assistant", log: "Conversation",
      message: "Your message", write: "Write a message…", send: "Send", preview: "Visitors write here", retry: "Retry",
      checking: "Checking that you are not a robot…", checkFailed: "The check that you are not a robot could not load.",
      robot: "We could not confirm that you are not a robot. Please try again.",
      tooMany: "Too many messages for now: please wait %s seconds and try again.", unavailable: "The assistant is not available right now.",
      offline: "The connection was lost. Check your network and retry.", writing: "The assistant is writing", book: "Book",
      helpful: "Helpful", unhelpful: "Not helpful", support: "Support", person: "Person", aPerson: "A person",
      waiting: "Waiting for a person…", joined: "%s joined the conversation", personTyping: "%s is typing…",
      ended: "The conversation has ended", back: "The assistant is back", form: "Contact form", thanks: "Thank you!",
      sources: "Sources", talk: "Talk to a person",
      fix: "Please correct the fields marked above.", empty: "Please fill in at least one field.", badEmail: "Enter a valid email address.", badPhone: "Enter a valid phone number.", required: "This field is required." },
    fr: { open: "Ouvrir le chat", close: "Fermer le chat", chatWith: "Discuter avec %s", chat: "Chat", ai: "Assistant IA", log: "Conversation",
      message: "Votre message", write: "Écrivez un message…", send: "Envoyer", preview: "Les visiteurs écrivent ici", retry: "Réessayer",
      checking: "Vérification que vous n'êtes pas un robot…", checkFailed: "La vérification anti-robot n'a pas pu se charger.",
      robot: "Nous n'avons pas pu confirmer que vous n'êtes pas un robot. Veuillez réessayer.",
      tooMany: "Trop de messages pour le moment : patientez %s secondes puis réessayez.", unavailable: "L'assistant n'est pas disponible pour le moment.",
      offline: "La connexion a été perdue. Vérifiez votre réseau et réessayez.", writing: "L'assistant écrit", book: "Réserver",
      helpful: "Utile", unhelpful: "Pas utile", support: "Assistance", person: "Conseiller", aPerson: "Un conseiller",
      waiting: "En attente d'un conseiller…", joined: "%s a rejoint la conversation", personTyping: "%s écrit…",
      ended: "La conversation est terminée", back: "L'assistant est de retour", form: "Formulaire de contact", thanks: "Merci !",
      sources: "Sources", talk: "Parler à un conseiller",
      fix: "Veuillez corriger les champs signalés ci-dessus.", empty: "Veuillez remplir au moins un champ.", badEmail: "Saisissez une adresse e-mail valide.", badPhone: "Saisissez un numéro de téléphone valide.", required: "Ce champ est obligatoire." },
    de: { open: "Chat öffnen", close: "Chat schließen", chatWith: "Chat mit %s", chat: "Chat", ai: "KI-Assistent", log: "Unterhaltung",
      message: "Ihre Nachricht", write: "Nachricht schreiben…", send: "Senden", preview: "Hier schreiben Besucher", retry: "Erneut versuchen",
      checking: "Wir prüfen, dass Sie kein Roboter sind…", checkFailed: "Die Prüfung, dass Sie kein Roboter sind, konnte nicht geladen werden.",
      robot: "Wir konnten nicht bestätigen, dass Sie kein Roboter sind. Bitte versuchen Sie es erneut.",
      tooMany: "Zu viele Nachrichten: Bitte warten Sie %s Sekunden und versuchen Sie es erneut.", unavailable: "Der Assistent ist gerade nicht verfügbar.",
      offline: "Die Verbindung wurde unterbrochen. Prüfen Sie Ihr Netzwerk und versuchen Sie es erneut.", writing: "Der Assistent schreibt", book: "Buchen",
      helpful: "Hilfreich", unhelpful: "Nicht hilfreich", support: "Support", person: "Mitarbeiter", aPerson: "Ein Mitarbeiter",
      waiting: "Warten auf einen Mitarbeiter…", joined: "%s ist der Unterhaltung beigetreten", personTyping: "%s schreibt…",
      ended: "Die Unterhaltung ist beendet", back: "Der Assistent ist zurück", form: "Kontaktformular", thanks: "Vielen Dank!",
      sources: "Quellen", talk: "Mit einem Mitarbeiter sprechen",
      fix: "Bitte korrigieren Sie die markierten Felder.", empty: "Bitte füllen Sie mindestens ein Feld aus.", badEmail: "Geben Sie eine gültige E-Mail-Adresse ein.", badPhone: "Geben Sie eine gültige Telefonnummer ein.", required: "Dieses Feld ist erforderlich." },
    es: { open: "Abrir el chat", close: "Cerrar el chat", chatWith: "Chatear con %s", chat: "Chat", ai: "Asistente de IA", log: "Conversación",
      message: "Tu mensaje", write: "Escribe un mensaje…", send: "Enviar", preview: "Aquí escriben los visitantes", retry: "Reintentar",
      checking: "Comprobando que no eres un robot…", checkFailed: "No se pudo cargar la comprobación de que no eres un robot.",
      robot: "No pudimos confirmar que no eres un robot. Inténtalo de nuevo.",
      tooMany: "Demasiados mensajes por ahora: espera %s segundos e inténtalo de nuevo.", unavailable: "El asistente no está disponible en este momento.",
      offline: "Se perdió la conexión. Comprueba tu red e inténtalo de nuevo.", writing: "El asistente está escribiendo", book: "Reservar",
      helpful: "Útil", unhelpful: "No útil", support: "Soporte", person: "Agente", aPerson: "Un agente",
      waiting: "Esperando a un agente…", joined: "%s se unió a la conversación", personTyping: "%s está escribiendo…",
      ended: "La conversación ha terminado", back: "El asistente ha vuelto", form: "Formulario de contacto", thanks: "¡Gracias!",
      sources: "Fuentes", talk: "Hablar con un agente",
      fix: "Corrija los campos marcados arriba.", empty: "Rellene al menos un campo.", badEmail: "Introduzca una dirección de correo válida.", badPhone: "Introduzca un número de teléfono válido.", required: "Este campo es obligatorio." },
    ar: { open: "فتح المحادثة", close: "إغلاق المحادثة", chatWith: "الدردشة مع %s", chat: "دردشة", ai: "مساعد ذكاء اصطناعي", log: "المحادثة",
      message: "رسالتك", write: "اكتب رسالة…", send: "إرسال", preview: "يكتب الزوار هنا", retry: "أعد المحاولة",
      checking: "جارٍ التحقق من أنك لست روبوتًا…", checkFailed: "تعذّر تحميل التحقق من أنك لست روبوتًا.",
      robot: "لم نتمكن من التأكد من أنك لست روبوتًا. يرجى المحاولة مرة أخرى.",
      tooMany: "رسائل كثيرة جدًا حاليًا: يرجى الانتظار %s ثانية ثم المحاولة مرة أخرى.", unavailable: "المساعد غير متاح حاليًا.",
      offline: "انقطع الاتصال. تحقق من شبكتك وأعد المحاولة.", writing: "المساعد يكتب", book: "احجز",
      helpful: "مفيد", unhelpful: "غير مفيد", support: "الدعم", person: "موظف", aPerson: "أحد الموظفين",
      waiting: "في انتظار أحد الموظفين…", joined: "انضم %s إلى المحادثة", personTyping: "%s يكتب…",
      ended: "انتهت المحادثة", back: "عاد المساعد", form: "نموذج التواصل", thanks: "شكرًا لك!",
      sources: "المصادر", talk: "التحدث إلى موظف",
      fix: "يرجى تصحيح الحقول المحددة أعلاه.", empty: "يرجى ملء حقل واحد على الأقل.", badEmail: "أدخل عنوان بريد إلكتروني صالحًا.", badPhone: "أدخل رقم هاتف صالحًا.", required: "هذا الحقل مطلوب." },
    he: { open: "פתיחת הצ'אט", close: "סגירת הצ'אט", chatWith: "צ'אט עם %s", chat: "צ'אט", ai: "עוזר בינה מלאכותית", log: "שיחה",
      message: "ההודעה שלך", write: "כתבו הודעה…", send: "שליחה", preview: "כאן המבקרים כותבים", retry: "ניסיון חוזר",
      checking: "בודקים שאינך רובוט…", checkFailed: "לא ניתן היה לטעון את הבדיקה שאינך רובוט.",
      robot: "לא הצלחנו לאשר שאינך רובוט. אנא נסו שוב.",
      tooMany: "יותר מדי הודעות כרגע: המתינו %s שניות ונסו שוב.", unavailable: "העוזר אינו זמין כרגע.",
      offline: "החיבור אבד. בדקו את הרשת ונסו שוב.", writing: "העוזר כותב", book: "הזמנה",
      helpful: "מועיל", unhelpful: "לא מועיל", support: "תמיכה", person: "נציג", aPerson: "נציג",
      waiting: "ממתינים לנציג…", joined: "%s הצטרף/ה לשיחה", personTyping: "%s מקליד/ה…",
      ended: "השיחה הסתיימה", back: "העוזר חזר", form: "טופס יצירת קשר", thanks: "תודה!",
      sources: "מקורות", talk: "שיחה עם נציג",
      fix: "נא לתקן את השדות המסומנים למעלה.", empty: "נא למלא לפחות שדה אחד.", badEmail: "נא להזין כתובת אימייל תקינה.", badPhone: "נא להזין מספר טלפון תקין.", required: "זהו שדה חובה." },
  };
  // The visitor's locale: the first well-formed of data-locale, the page's
  // lang and the browser's languages ("fr_CA" reads "fr-CA").
  const asked = [script.dataset.locale, document.documentElement.lang, ...(navigator.languages || []), navigator.language]
    .map((t) => String(t || "").trim().replace(/_/g, "-")).find((t) => /^[a-z]{2,3}(-|$)/i.test(t)) || "en";
  const lang = asked.split("-")[0].toLowerCase();
  const pseudo = lang === "qps";
  const table = words[lang] || words.en;
  const tr = (k, arg = "") => (pseudo ? "⟦" + words.en[k] + "⟧" : table[k] || words.en[k]).replace("%s", () => arg);
  // The language the widget speaks (its elements' lang) and its direction.
  const shownLang = words[lang] ? lang : "en";
  const dir = lang === "ar" || lang === "he" ? "rtl" : "ltr";
  // The locale sent with each message, as the spec writes it: a language's
  // two letters, then a hyphen and a region's two when given ("fr-CA");
  // nothing for a language of three letters.
  const locale = /^[a-z]{2}(-[a-z]{2})?$/i.test(asked) ? lang + asked.slice(2).toUpperCase() : /^[a-z]{2}$/.test(lang) ? lang : undefined;

  const css = `
    :host { all: initial; }
    * { box-sizing: border-box; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
    .launcher { position: fixed; inset-inline-end: 20px; bottom: 20px; width: 56px; height: 56px; border-radius: 50%;
      border: none; cursor: pointer; color: var(--on-primary); background: var(--primary); box-shadow: 0 4px 14px rgba(0,0,0,.25);
      z-index: 2147483000; display: grid; place-items: center; }
    .launcher.pulse { animation: pulse 2s 3; }
    @media (prefers-reduced-motion: reduce) { .launcher.pulse { animation: none; } }
    @keyframes pulse { 0% { box-shadow: 0 0 0 0 var(--primary); } 70% { box-shadow: 0 0 0 14px transparent; } 100% { box-shadow: 0 0 0 0 transparent; } }
    .teaser { position: fixed; inset-inline-end: 86px; bottom: 30px; max-width: 240px; background: #fff; color: #111;
      border-radius: 12px; padding: 10px 14px; box-shadow: 0 4px 14px rgba(0,0,0,.2); font-size: 14px; z-index: 2147483000; cursor: pointer; }
    .panel { position: fixed; inset-inline-end: 20px; bottom: 88px; width: 370px; max-width: calc(100vw - 24px);
      height: 560px; max-height: calc(100vh - 110px); display: flex; flex-direction: column; background: #fff; color: #111;
      border-radius: 14px; box-shadow: 0 8px 30px rgba(0,0,0,.3); overflow: hidden; z-index: 2147483000; }
    @media (max-width: 480px) { .panel { inset-inline-end: 0; bottom: 0; width: 100vw; max-width: 100vw; height: 100vh; max-height: 100vh; border-radius: 0; }
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
    .msg p, .msg ul, .msg ol, .msg pre { margin: 0 0 6px; } .msg :last-child { margin-bottom: 0; }
    .msg ul, .msg ol { padding-inline-start: 20px; }
    .msg code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; background: rgba(0,0,0,.07); border-radius: 4px; padding: 0 3px; }
    .msg pre { overflow-x: auto; padding: 8px; border-radius: 8px; background: #f4f4f5; color: #111; }
    .msg pre code { background: none; padding: 0; }
    .sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
    .msg a { color: inherit; text-decoration: underline; }
    .bot { align-self: flex-start; background: #fff; border: 1px solid #e4e4e7; }
    .me { align-self: flex-end; background: var(--primary); color: var(--on-primary); }
    .person { align-self: flex-start; background: #fff; border: 1px solid var(--primary); border-inline-start-width: 4px; }
    .person .author { display: flex; align-items: center; gap: 6px; font-size: 12px; font-weight: 600; margin-bottom: 4px; }
    .person .tag { font-weight: 500; font-size: 11px; background: #e4e4e7; color: #111; border-radius: 999px; padding: 1px 7px; }
    .presence { margin: 0; padding: 6px 14px; font-size: 13px; color: #333; background: #fff; border-bottom: 1px solid #e4e4e7; }
    .presence[hidden] { display: none; }
    .person-typing { margin: 0; padding: 0 14px; font-size: 13px; font-style: italic; color: #555; background: #f7f7f8; }
    .person-typing:not(:empty) { padding: 0 14px 8px; }
    .error { align-self: stretch; background: #fef2f2; color: #991b1b; border: 1px solid #fecaca; }
    .error button { margin-inline-start: 8px; }
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
    .card .field-error, .card .lead-error { margin: 2px 0 0; font-size: 12px; color: #991b1b; }
    .card .field-error:empty, .card .lead-error:empty { display: none; }
    .card [aria-invalid="true"] { border-color: #b91c1c; }
    .card .go { margin-top: 8px; border: none; border-radius: 8px; padding: 7px 12px; background: var(--primary); color: var(--on-primary); cursor: pointer; }
    textarea { flex: 1; resize: none; border: 1px solid #d4d4d8; border-radius: 10px; padding: 8px 10px; font-size: 14px; min-height: 40px; color: #111; }
    form.compose button { border: none; border-radius: 10px; padding: 0 14px; background: var(--primary); color: var(--on-primary); font-size: 14px; cursor: pointer; }
    form.compose button:disabled, .card .go:disabled { opacity: .5; cursor: default; }
    .captcha { padding: 8px 10px 0; background: #fff; border-top: 1px solid #e4e4e7; font-size: 13px; color: #333; }
    .captcha[hidden] { display: none; }
    .captcha p { margin: 4px 0; }
    .captcha p:empty { display: none; }
    .captcha button { margin-inline-start: 8px; border: 1px solid #d4d4d8; background: #fff; color: #111; border-radius: 999px;
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

  // Markdown, safely: paragraphs, bulleted ("- ", "* ") and numbered
  // ("1. ") lists, fenced code blocks (```), **bold**, *italics* and
  // _italics_, `inline code` and links (http and https only), each made of
  // elements and text nodes. What is not understood stays text: an unclosed
  // marker, a link of another scheme; an unclosed fence runs to the end (a
  // streamed answer's block shows as code while it comes).
  const inline = (text) => {
    const out = [];
    // code | bold | *italic* | _italic_ (after a non-word character, so that
    // snake_case stays) | [label](url) | a bare url.
    const re = /`([^`]+)`|\*\*(.+?)\*\*|\*([^\s*](?:[^*]*[^\s*])?)\*|(^|\W)_([^\s_](?:[^_]*[^\s_])?)_(?!\w)|\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)|(https?:\/\/[^\s<>()`]+[^\s<>().,;:!?'"`])/g;
    let last = 0;
    for (const m of text.matchAll(re)) {
      if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
      if (m[1] !== undefined) out.push(el("code", {}, m[1]));
      else if (m[2] !== undefined) out.push(el("strong", {}, ...inline(m[2])));
      else if (m[3] !== undefined) out.push(el("em", {}, ...inline(m[3])));
      else if (m[5] !== undefined) out.push(m[4], el("em", {}, ...inline(m[5])));
      else {
        const href = m[7] || m[8];
        out.push(el("a", { href, target: "_blank", rel: "noopener noreferrer" }, m[6] || m[8]));
      }
      last = m.index + m[0].length;
    }
    if (last < text.length) out.push(document.createTextNode(text.slice(last)));
    return out;
  };
  const render = (node, text) => {
    const out = [], lines = text.split("\n");
    let para = null, list = null;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const item = /^\s*(?:([-*])|(\d{1,9})[.)])\s+(.*)$/.exec(line);
      if (/^\s*```/.test(line)) {
        const code = [];
        while (++i < lines.length && !/^\s*```/.test(lines[i])) code.push(lines[i]);
        out.push(el("pre", {}, el("code", {}, code.join("\n"))));
        para = list = null;
      } else if (item) {
        // Items of one kind make one list, blank lines between them or not.
        const tag = item[1] ? "ul" : "ol";
        if (list?.localName !== tag) out.push(list = el(tag, item[2] && item[2] !== "1" ? { start: item[2] } : {}));
        list.append(el("li", {}, ...inline(item[3])));
        para = null;
      } else if (!line.trim()) para = null;
      else if (list && !para && /^\s/.test(line)) list.lastChild.append(el("br"), ...inline(line.trim()));
      else {
        if (para) para.append(el("br"));
        else out.push(para = el("p"));
        para.append(...inline(line));
        list = null;
      }
    }
    node.replaceChildren(...out);
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
      id = dash ? dash.prefix + randomHex() : "w-" + crypto.randomUUID();
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
    if (dash) h["X-CSRF-Token"] = dash.csrf;
    return h;
  };

  // problem turns a refused answer into words for the visitor.
  const problem = async (resp) => {
    let body = {};
    try { body = await resp.json(); } catch { /* not JSON */ }
    if (resp.status === 429 && resp.headers.get("Retry-After")) {
      return tr("tooMany", resp.headers.get("Retry-After"));
    }
    if (body.code === "CAPTCHA_FAILED" || body.code === "CAPTCHA_REQUIRED") {
      return tr("robot");
    }
    // The server's words are for the site's owner, in English: in the console.
    if (body.error) console.warn("Parley widget:", body.error);
    return tr("unavailable");
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
      if (dash) preview.addEventListener("parley-new-conversation", () => { forget(); show(); });
      show();
      return;
    }
    const q = segment ? "?segment=" + encodeURIComponent(segment) : "";
    const resp = await fetch(base + "/chat/" + encodeURIComponent(tenant) + "/widget" + q,
      { headers: widgetKey ? { "X-Widget-Key": widgetKey } : {} });
    let s, refused = "";
    if (resp.ok) s = await resp.json();
    else if (await originRefused(resp)) return;
    else {
      // Shown to whoever opens the chat, so that the site's owner sees why.
      refused = await problem(resp);
      console.warn("Parley widget:", refused);
      s = { name: tr("chat"), segment: { welcomeMessage: null, conversationStarters: [] }, bot: { primaryColor: "#52525b" },
        launcher: {}, bookingCta: null, form: null, endpoints: {} };
    }
    mount(s, refused);
  }

  // ---- Refused origin (issue 38) ----
  // originRefused reports whether resp is the refusal of this page's origin
  // by the tenant's allowed domains. Then visitors see nothing (the widget,
  // if shown, goes), and the site's developer reads in the console which
  // origin to allow, and where; the owner's overview lists the site too.
  const originRefused = async (resp) => {
    if (resp.status !== 403) return false;
    let body = {};
    try { body = await resp.clone().json(); } catch { /* not JSON */ }
    if (body.error !== "Origin not allowed") return false;
    if (mounted) { mounted.remove(); mounted = null; }
    console.warn("Parley widget: this site (" + location.origin + ") is not among the allowed domains of \"" + tenant +
      "\", so the chat is hidden. Allow it in Parley's dashboard: Overview, \"Allow this site\" (or Developer settings, Allowed domains).");
    return true;
  };

  // avatar is the bot's picture (an http(s) or data:image address), else its
  // initial on the avatar colour.
  const avatar = (s) => {
    const src = s.bot.avatar || "";
    if (/^(https?:|data:image\/)/i.test(src)) return el("img", { class: "avatar", src, alt: "" });
    const name = s.bot.name || s.name || "?";
    return el("div", { class: "avatar", "aria-hidden": "true" }, [...name][0].toUpperCase());
  };

  // ---- Keyboard and screen readers ----
  // keys makes the open panel keyboard-friendly: Escape closes it (shut
  // gives the launcher the focus back), and Tab and Shift+Tab go round its
  // controls, not out to the page. It returns announce(text), which has
  // screen readers read text once. A new answer is read once it is
  // complete: the log is not a live region (aria-live="off" overrides role
  // log's implicit polite), because screen readers read a streamed bubble
  // chunk by chunk, or again from its start at each chunk, and aria-busy,
  // which should hold them back until the end, is ignored by several
  // (NVDA, JAWS). One visually hidden polite status gets the finished text
  // instead, as a new text node, so that the same words twice are read
  // twice.
  const keys = (root, panel, shut) => {
    root.addEventListener("keydown", (e) => {
      if (panel.hidden || preview) return;
      if (e.key === "Escape") { e.stopPropagation(); shut(); return; }
      if (e.key !== "Tab" || !panel.contains(root.activeElement)) return;
      const stops = [...panel.querySelectorAll("button, textarea, input, select, a[href], [tabindex]")]
        .filter((n) => !n.disabled && n.tabIndex >= 0 && n.getClientRects().length);
      const at = stops.indexOf(root.activeElement);
      if (e.shiftKey ? at === 0 : at === stops.length - 1) { e.preventDefault(); stops.at(e.shiftKey ? -1 : 0).focus(); }
    });
    const heard = el("p", { class: "sr", role: "status" });
    panel.append(heard);
    return (text) => heard.replaceChildren(text);
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

    const log = el("div", { class: "log", role: "log", "aria-live": "off", "aria-label": tr("log") }); // see announce
    const input = el("textarea", { rows: "1", "aria-label": tr("message"), placeholder: tr("write"), maxlength: "15000" });
    const send = el("button", { type: "submit" }, tr("send"));
    const form = el("form", { class: "compose" }, input, send);
    const close = el("button", { type: "button", "aria-label": tr("close") }, "×");
    const who = el("div", { class: "who" }, el("div", { class: "name" }, s.bot.name || s.name));
    if (s.bot.title) who.append(el("div", { class: "title" }, s.bot.title));
    if (s.bot.showAiBadge) who.append(el("div", { class: "badge" }, tr("ai")));
    const note = el("p", { role: "status" });
    // The presence line: whether a person is awaited or answers.
    const presence = el("p", { class: "presence", role: "status", hidden: "" });
    // The line under the conversation that tells a person is typing; it is
    // always there (empty when nobody types) so that its changes are read.
    const personTyping = el("p", { class: "person-typing", role: "status" });
    const checkRow = el("div", { class: "captcha", hidden: "" }, el("slot", { name: "captcha" }), note);
    const handover = el("button", { type: "button", class: "handover", hidden: "" }, tr("talk"));
    const panel = el("section", { class: "panel", role: "dialog", "aria-label": tr("chatWith", s.bot.name || s.name), hidden: "" },
      el("header", {}, avatar(s), who, close), presence, log, personTyping, checkRow, handover, form);
    const launcher = el("button", { class: "launcher" + (s.launcher.bubblePulse ? " pulse" : ""), "aria-label": tr("open"),
      "aria-expanded": "false" }, icon(bubbleIcon, 26));
    const teaser = el("div", { class: "teaser", hidden: "" }, s.launcher.teaserText || "");
    root.append(teaser, panel, launcher);
    for (const n of [teaser, panel, launcher]) { n.lang = shownLang; n.dir = dir; }
    apiMount(host, launcher, teaser, close);

    // The bot challenge, when on (never in a preview, which sends nothing):
    // its frame in a light-DOM child of the host element, slotted into the
    // panel above the message field.
    let busy = false;
    let check = null;
    const sync = () => { send.disabled = busy || !!refused || !!mute || (check !== null && !check.ready()); };
    if (s.captcha && !preview) {
      const box = el("div", { slot: "captcha" });
      host.append(box);
      checkRow.hidden = false;
      const again = el("button", { type: "button" }, tr("retry"));
      again.addEventListener("click", () => check.retry());
      check = challenge(s.captcha, box, (state) => {
        if (state === "error") note.replaceChildren(tr("checkFailed"), again);
        else note.replaceChildren(state === "waiting" ? tr("checking") : "");
        sync();
      });
      sync();
    }

    const open = () => {
      toggled(true, panel.hidden);
      if (check) check.start();
      panel.hidden = false; teaser.hidden = true;
      launcher.setAttribute("aria-expanded", "true");
      input.focus();
      follow();
    };
    const shut = () => { toggled(false, !panel.hidden); panel.hidden = true; launcher.setAttribute("aria-expanded", "false"); launcher.focus(); unfollow(); };
    launcher.addEventListener("click", () => (panel.hidden ? open() : shut()));
    const announce = keys(root, panel, shut);
    close.addEventListener("click", shut);
    teaser.addEventListener("click", open);
    const delay = Math.max(0, s.launcher.autoOpenDelay || 0) * 1000;
    if (preview) {
      host.classList.add("preview");
      panel.hidden = false; launcher.setAttribute("aria-expanded", "true");
      teaser.hidden = !s.launcher.teaserText;
      input.disabled = send.disabled = !!mute;
      if (mute) input.placeholder = tr("preview");
    } else if (s.launcher.autoOpen) setTimeout(() => { if (panel.hidden) open(); }, delay);
    else if (s.launcher.teaserText) setTimeout(() => { if (panel.hidden) teaser.hidden = false; }, delay);

    const bubble = (cls, text) => {
      const b = el("div", { class: "msg " + cls, dir: "auto" }); // its text's direction, on its side of the panel's
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
      card.append(el("button", { type: "button", class: "go", onclick: () => ask(b.ctaText || b.headline) }, b.ctaText || tr("book")));
      log.append(card);
    }
    const leadSpot = s.form ? log.appendChild(document.createComment("lead form")) : null;
    // sources is the line under an answer naming the knowledge-base
    // entries it cites: links to their pages (http and https only; the
    // test chat also names an entry without one).
    const sources = (node, list) => {
      const line = el("div", { class: "sources" }, tr("sources") + ": ");
      list.forEach((src, i) => {
        if (i) line.append(", ");
        line.append(/^https?:\/\//i.test(src.url || "")
          ? el("a", { href: src.url, target: "_blank", rel: "noopener noreferrer" }, src.title)
          : document.createTextNode(src.title));
      });
      node.append(line);
    };
    const votes = (node, messageId) => {
      if (preview) return; // the dashboard's chats are tests: no votes
      const up = el("button", { type: "button", "aria-label": tr("helpful"), "aria-pressed": "false" }, icon(thumbIcon, 14));
      const down = el("button", { type: "button", "aria-label": tr("unhelpful"), "aria-pressed": "false" }, icon(thumbIcon, 14, true));
      up.dataset.value = "up"; down.dataset.value = "down";
      up.addEventListener("click", () => vote(messageId, "up", [up, down]));
      down.addEventListener("click", () => vote(messageId, "down", [up, down]));
      node.append(el("div", { class: "votes" }, up, down));
    };
    // A person's message: their name and a "Person" tag above it, in a
    // bubble of its own style, so that the visitor knows who writes.
    const personBubble = (name, text) => {
      const b = el("div", { class: "msg person" }, el("div", { class: "author" }, name || tr("support"), el("span", { class: "tag" }, tr("person"))));
      const body = el("div", { dir: "auto" });
      render(body, text);
      b.append(body);
      log.append(b);
      log.scrollTop = log.scrollHeight;
    };
    const past = refused || mute ? [] : history.load();
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
      if (m.u) used(node, m.u);
    }

    // The live part: while a person is awaited or answers, an EventSource
    // on the session's stream brings their messages and the changes of
    // status, only while the panel is open. It resumes after the last
    // message received (lastEventId on opening, Last-Event-ID when the
    // browser reconnects by itself), and a message already shown is never
    // shown again.
    let live = refused || mute ? {} : liveState.load();
    let source = null, retry = null, retryDelay = 1000;
    const awaited = (st) => st === "escalated" || st === "human";
    // Without a language model (s.handover), the way to a person: the
    // visitor's request in the chat, which the hand-over tool answers, or
    // the lead form. Hidden while a person is awaited or answers.
    const showHandover = () => { handover.hidden = !s.handover || !!preview || !!refused || awaited(live.status); };
    handover.addEventListener("click", () => {
      if (s.handover === "chat") { ask(tr("talk")); return; }
      const card = leadCard();
      if (!card.isConnected) log.append(card);
      card.scrollIntoView({ block: "nearest" });
      const first = card.querySelector("input, textarea, select");
      if (first) first.focus();
    });
    showHandover();
    const showPresence = (st, name, was) => {
      let text = "";
      if (st === "escalated") text = tr("waiting");
      else if (st === "human") text = tr("joined", name || tr("aPerson"));
      else if (awaited(was) && st === "closed") text = tr("ended");
      else if (awaited(was)) text = tr("back");
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
      if (awaited(st) && !awaited(was)) emit("escalated", { status: st });
      if (awaited(st)) follow(); else unfollow();
    };
    // A person typing shows until their message comes, or 5 seconds after
    // the stream's last word of it (it repeats it every 3 s while they type).
    let typingTimer = null;
    const stopTyping = () => { clearTimeout(typingTimer); personTyping.textContent = ""; };
    const personTypes = (name) => {
      personTyping.textContent = tr("personTyping", name || tr("aPerson"));
      clearTimeout(typingTimer);
      typingTimer = setTimeout(stopTyping, 5000);
    };
    const personSaid = (d, eventId) => {
      stopTyping();
      if (eventId) { live.last = eventId; liveState.save(live); }
      if (!d.id || shown.has(d.id)) return;
      shown.add(d.id);
      personBubble(d.authorName, d.content);
      announce((d.authorName || tr("support")) + ": " + d.content);
      emit("message", { text: d.content, role: "person", id: d.id });
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

    // ---- The lead form (issue 38) ----
    // The form's state, kept beside the conversation for this session only:
    // {sid, asked} once the assistant offered it, {sid, sent, t} once sent,
    // so that every page of the site shows it sent, with its thanks.
    const leadState = {
      load() { try { const v = JSON.parse(localStorage.getItem(leadKey)) || {}; return v.sid === sessionId() ? v : {}; } catch { return {}; } },
      save(v) { try { localStorage.setItem(leadKey, JSON.stringify({ ...v, sid: sessionId() })); } catch { /* storage off: kept for the page's life */ } },
    };
    let lead = refused || preview ? {} : leadState.load(), leadNode = null;
    // fieldProblem is a refused field's problem in the visitor's words: the
    // server's, about the field, where the table has none.
    const fieldProblem = (fd, detail) => /email/.test(detail) ? tr("badEmail") : /phone/.test(detail) ? tr("badPhone")
      : /required/.test(detail) ? tr("required") : fd.label + " " + detail;
    // thanks is the form's place once sent; leadCard the form, or its
    // thanks once sent, made once.
    const thanks = (t) => el("div", { class: "msg bot", role: "status" }, t || tr("thanks"));
    const leadCard = () => leadNode || (leadNode = lead.sent ? thanks(lead.t) : leadForm(s.form));
    // showLead places the form (or, once sent, its thanks) when the segment
    // says: "open" as the chat is built (on_open; always in a preview),
    // "past" after the kept conversation (the other moments, when they came
    // already), "answer" after an answer (ev, the final event: the first
    // answer, or one whose turn offered the form, SHOW_FORM).
    function showLead(when, ev, answered) {
      const d = s.form.display || "after_first_answer";
      let show = false;
      if (when === "open") show = !!preview || d === "on_open";
      else if (preview || d === "on_open") show = false;
      else if (when === "past") show = lead.sent || lead.asked || (d === "after_first_answer" && ev.some((m) => m.r === "bot"));
      else if (d === "after_first_answer") show = answered;
      else if ((ev.toolExecutions || []).some((x) => x.type === "SHOW_FORM" && x.success)) {
        show = true;
        if (!lead.sent) { lead = { asked: true }; leadState.save(lead); }
        if (leadNode && !lead.sent) { log.append(leadNode); log.scrollTop = log.scrollHeight; return; }
      }
      if (!show || leadNode) return;
      leadCard();
      if (when === "open") leadSpot.replaceWith(leadNode);
      else { log.append(leadNode); log.scrollTop = log.scrollHeight; }
    }

    // leadForm is the segment's form, posted to /form/{slug} (channel form)
    // with the chat's session, so that the lead joins its conversation. A
    // refused field says why beside it; any other refusal, once, by the
    // button. Both go as soon as the visitor changes what was refused.
    function leadForm(f) {
      const errs = {};
      const fields = f.fields.map((fd) => {
        const id = "pf-" + fd.name;
        const input = fd.type === "textarea" ? el("textarea", { id, name: fd.name, rows: "2" })
          : el("input", { id, name: fd.name, type: fd.type === "phone" ? "tel" : fd.type === "email" ? "email" : "text" });
        if (fd.required) input.required = true;
        errs[fd.name] = el("p", { class: "field-error", id: id + "-error" });
        input.addEventListener("input", () => mark(fd.name, ""));
        return [el("label", { for: id }, fd.label + (fd.required ? " *" : "")), input, errs[fd.name]];
      }).flat();
      const go = el("button", { type: "submit", class: "go" }, tr("send"));
      go.disabled = !!preview;
      const general = el("p", { class: "lead-error", role: "alert" });
      const card = el("form", { class: "card lead", "aria-label": tr("form"), novalidate: "" }, ...fields, general, go);
      // mark shows msg beside the field name ("" clears it), and tells
      // assistive technology that the field is wrong and why.
      const mark = (name, msg) => {
        const input = card.elements[name];
        errs[name].textContent = msg;
        if (msg) { input.setAttribute("aria-invalid", "true"); input.setAttribute("aria-describedby", errs[name].id); }
        else { input.removeAttribute("aria-invalid"); input.removeAttribute("aria-describedby"); }
        if (!card.querySelector("[aria-invalid]") && general.textContent === tr("fix")) general.textContent = "";
      };
      card.addEventListener("input", () => { if (general.textContent !== tr("fix")) general.textContent = ""; });
      card.addEventListener("submit", async (e) => {
        e.preventDefault();
        go.disabled = true;
        general.textContent = "";
        const values = {};
        for (const fd of f.fields) {
          mark(fd.name, "");
          const v = card.elements[fd.name].value.trim();
          if (v) values[fd.name] = v;
        }
        try {
          const captchaToken = check ? await check.take() : undefined;
          const r = await fetch(s.endpoints.form, { method: "POST", headers: headers(), body: JSON.stringify({
            segment: segment || undefined, fields: values, pageUrl: location.href, widgetKey: widgetKey || undefined, captchaToken,
            sessionId: sessionId(), anonymousId: visitorToken ? undefined : anonymousId() }) });
          go.disabled = false;
          if (r.status === 400) {
            const body = await r.clone().json().catch(() => ({}));
            const details = body.details || {};
            const bad = f.fields.filter((fd) => typeof details[fd.name] === "string");
            bad.forEach((fd) => mark(fd.name, fieldProblem(fd, details[fd.name])));
            if (bad.length) { general.textContent = tr("fix"); card.elements[bad[0].name].focus(); return; }
            if (details.fields) { general.textContent = tr("empty"); return; }
          }
          if (!r.ok) { general.textContent = await problem(r); return; }
          const body = await r.json();
          lead = { sent: true, t: f.confirmationMessage || body.message || tr("thanks") };
          leadState.save(lead);
          leadNode = thanks(lead.t);
          card.replaceWith(leadNode);
          emit("lead", { source: "form", submissionId: body.id });
        } catch {
          go.disabled = false;
          general.textContent = tr("offline");
        }
      });
      return card;
    }
    if (s.form) { showLead("open"); showLead("past", past); }
    // ---- end of the lead form ----

    // ask sends the visitor's message with a key of its own
    // (Idempotency-Key), the same for every try: the server stores and
    // answers it once. A try that meets a 503 or a 409 (the service
    // restarting, the session still busy) or loses its connection before
    // the answer ends is sent again, up to three times, after Retry-After
    // or 0.3, 1.2, 4.8 s: the server replays an answer it stored, or answers the
    // message now. The Retry button after a failure sends the same message,
    // with the same key, once more.
    async function ask(text, key) {
      text = text.trim();
      if (!text || busy || mute) return;
      busy = true; sync();
      if (starters) { starters.remove(); starters = null; }
      if (!key) {
        bubble("me", text);
        history.add({ r: "me", t: text });
        key = randomHex();
      }
      const typing = el("div", { class: "typing", "aria-label": tr("writing") }, "…");
      log.append(typing);
      let answer = null, said = "";
      const fail = (msg) => {
        typing.remove();
        const retry = el("button", { type: "button" }, tr("retry"));
        const e = el("div", { class: "msg error", role: "alert" }, msg, retry);
        retry.addEventListener("click", () => { e.remove(); ask(text, key); });
        log.append(e);
        log.scrollTop = log.scrollHeight;
      };
      // once is one try: true when it ended (answered, or the failure
      // shown), else the milliseconds to wait before the next; last says
      // no try follows, so a failure is shown.
      const once = async (wait, last) => {
        const captchaToken = check ? await check.take() : undefined;
        const resp = await fetch(dash ? dash.url : s.endpoints.chat, { method: "POST",
          headers: { ...headers(), "Idempotency-Key": key }, body: JSON.stringify({
            message: text, sessionId: sessionId(), segment: segment || undefined, pageUrl: location.href,
            pageContext: { title: document.title, url: location.href },
            visitorToken: visitorToken || undefined, anonymousId: anonymousId(), widgetKey: widgetKey || undefined, captchaToken, locale }) });
        if (await originRefused(resp)) return true;
        if ((resp.status === 503 || resp.status === 409) && !last) {
          return (Number(resp.headers.get("Retry-After")) * 1000) || wait;
        }
        if (!resp.ok) { fail(await problem(resp)); return true; }
        const reader = resp.body.getReader();
        const decoder = new TextDecoder();
        let buf = "";
        said = "";
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
              if (ev.error) {
                if (ev.code === "TEMPORARILY_UNAVAILABLE" && !last) return wait;
                fail(ev.error); return true;
              }
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
                if (answer) history.add({ r: "bot", t: said || ev.message || "", id: ev.messageId || undefined, s: cited,
                  u: dash ? usedOf(ev) : undefined });
                if (answer) announce(answer.textContent);
                if (answer && cited) sources(answer, cited);
                answered(ev, answer, said);
                if (answer && ev.messageId) votes(answer, ev.messageId);
                if (ev.status) setStatus(ev.status, ev.assignee, ev.streamToken);
                if (s.form) showLead("answer", ev, !!answer);
                return true;
              }
            }
          }
        }
        if (last) { fail(tr("offline")); return true; }
        return wait; // cut before its end
      };
      try {
        for (let n = 0, wait = 300; ; n++, wait *= 4) {
          let next;
          try {
            next = await once(wait, n === 3);
          } catch (err) {
            console.warn("Parley widget:", err);
            if (n === 3) { fail(tr("offline")); break; }
            next = wait;
          }
          if (next === true) break;
          await new Promise((ok) => setTimeout(ok, next));
        }
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
    if (!preview) bind(panel, open, shut, ask, () => busy);
  }

  if (document.readyState === "complete") start();
  else addEventListener("load", start, { once: true });
})();
