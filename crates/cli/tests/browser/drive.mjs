// Drives a real headless Chromium (through playwright-core's CDP driver)
// against `agentlog serve` and an HTML export, as a person would, and prints
// what it saw as one JSON object on stdout. The Rust test
// (crates/cli/tests/browser.rs) prepares the sessions, starts the server,
// appends to a session when asked, and checks the result.
//
// usage: node drive.mjs CONFIG.json
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const require = createRequire(path.join(cfg.modules, 'package.json'));
const { chromium } = require('playwright-core');

const out = { steps: [] };
const log = (s) => out.steps.push(s);

const browser = await chromium.launch({
  executablePath: cfg.chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

// Every request the pages make, and everything that would betray a script
// from session text running.
const requests = [];
const dialogs = [];
async function newPage(opts = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: opts.dark ? 'dark' : 'light', ...opts.ctx });
  const page = await ctx.newPage();
  page.on('request', (r) => requests.push(r.url()));
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  return page;
}

// Opens every <details>, then reports whether anything from the corpus ran
// or could run: the title, a global the payloads set, inline handlers,
// javascript: links, inline scripts.
async function hostileCheck(page, label) {
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
  await page.waitForTimeout(300);
  const r = await page.evaluate(() => {
    const all = Array.from(document.querySelectorAll('*'));
    return {
      title: document.title,
      pwned: typeof window.__pwned !== 'undefined',
      handlers: all.filter((e) => Array.from(e.attributes).some((a) => a.name.toLowerCase().startsWith('on'))).length,
      jsLinks: Array.from(document.querySelectorAll('[href],[src],[action],[formaction]')).filter((e) =>
        ['href', 'src', 'action', 'formaction'].some((a) => /^\s*(javascript|vbscript|data:text)/i.test(e.getAttribute(a) || ''))).length,
      inlineScripts: document.querySelectorAll('script:not([src])').length,
      iframes: document.querySelectorAll('iframe,object,embed').length,
      text: document.body.innerText.length,
      planted: document.body.innerText.includes('onerror'),
    };
  });
  // Click every link that came from session text and would stay on the page.
  const links = await page.$$('.md a');
  for (const a of links.slice(0, 40)) {
    const href = await a.getAttribute('href');
    if (href && href.startsWith('#')) await a.click().catch(() => {});
  }
  r.titleAfterClicks = await page.title();
  r.pwnedAfterClicks = await page.evaluate(() => typeof window.__pwned !== 'undefined');
  r.label = label;
  return r;
}

try {
  const base = cfg.base;

  // 1. The list loads.
  let page = await newPage();
  await page.goto(base, { waitUntil: 'load' });
  out.list = {
    title: await page.title(),
    rows: await page.locator('table.list tbody tr').count(),
    count: await page.locator('#count').innerText(),
  };
  log('list');
  if (cfg.screenshots) await page.screenshot({ path: path.join(cfg.screenshots, 'list.png') });
  // Filter by agent through the form.
  await page.selectOption('select[name=agent]', 'pi');
  await Promise.all([page.waitForNavigation(), page.click('form.filters button[type=submit]')]);
  out.filtered = {
    agents: await page.$$eval('table.list tbody tr .agent', (xs) => Array.from(new Set(xs.map((x) => x.textContent)))),
    url: page.url(),
  };
  log('filter');

  // 2. Search finds the planted word; its link lands on the message.
  await page.goto(base, { waitUntil: 'load' });
  await page.fill('#q', cfg.word);
  await Promise.all([page.waitForNavigation(), page.press('#q', 'Enter')]);
  out.search = {
    hits: await page.locator('.hit-row').count(),
    marks: await page.$$eval('.hit-row mark', (ms) => ms.map((m) => m.textContent)),
  };
  if (cfg.screenshots) await page.screenshot({ path: path.join(cfg.screenshots, 'search.png') });
  await Promise.all([page.waitForNavigation(), page.click('.hit-row a.title')]);
  await page.waitForTimeout(300);
  out.landing = await page.evaluate((word) => {
    const id = decodeURIComponent(location.hash.slice(1));
    const el = document.getElementById(id);
    const r = el ? el.getBoundingClientRect() : null;
    return {
      hash: location.hash,
      found: !!el,
      containsWord: !!el && el.textContent.includes(word),
      inView: !!r && r.top >= 0 && r.top < window.innerHeight,
      position: el ? Number(el.getAttribute('data-i')) : -1,
    };
  }, cfg.word);
  log('search');

  // 3. A branch can be switched.
  await page.goto(base + 'session?p=' + encodeURIComponent(cfg.branchSession), { waitUntil: 'load' });
  const before = await page.locator('#entries').innerText();
  const nav = await page.locator('nav.branches').first().innerText().catch(() => '');
  await Promise.all([page.waitForNavigation(), page.click('nav.branches a.branch')]);
  const after = await page.locator('#entries').innerText();
  out.branch = {
    nav,
    beforeHasA: before.includes(cfg.branchA), beforeHasB: before.includes(cfg.branchB),
    afterHasA: after.includes(cfg.branchA), afterHasB: after.includes(cfg.branchB),
  };
  log('branch');

  // 4. Paging: a long session shows a first page and fetches the next.
  await page.goto(base + 'session?p=' + encodeURIComponent(cfg.longSession), { waitUntil: 'load' });
  const first = await page.locator('#entries [data-i]').count();
  // Scrolling to the button loads the next page (the button works too).
  await page.evaluate(() => { const m = document.getElementById('more'); if (m) { m.scrollIntoView(); m.click(); } });
  await page.waitForFunction((n) => document.querySelectorAll('#entries [data-i]').length > n, first);
  out.paging = { first, after: await page.locator('#entries [data-i]').count() };
  log('paging');

  // 5. Live tail: the test appends a message; it appears without a reload.
  await page.goto(base + 'session?p=' + encodeURIComponent(cfg.tailSession), { waitUntil: 'load' });
  await page.waitForSelector('#live.on', { timeout: 10000 });
  fs.writeFileSync(cfg.tailSignal, 'ready');
  try {
    await page.waitForFunction((w) => document.getElementById('entries').innerText.includes(w), cfg.tailWord, { timeout: 20000 });
  } catch (e) {
    const file = fs.readFileSync(cfg.tailSession, 'utf8');
    const served = await page.evaluate(async (u) => (await fetch(u)).text(), base + 'session?p=' + encodeURIComponent(cfg.tailSession));
    throw new Error('live tail: the file has the word: ' + file.includes(cfg.tailWord) + ', a reload has it: ' + served.includes(cfg.tailWord)
      + ', tail url: ' + await page.getAttribute('main', 'data-tail') + ', live: ' + await page.locator('#live.on').count() + '\n' + file.slice(-600));
  }
  out.tail = { shown: true, reloaded: false };
  out.tailIds = await page.$$eval('#entries [data-i]', (xs) => xs.map((x) => x.id));
  log('tail');

  // 6. A session page, the stats page, and dark mode, for the README.
  await page.goto(base + 'session?p=' + encodeURIComponent(cfg.showcaseSession), { waitUntil: 'load' });
  await page.evaluate(() => {
    document.querySelectorAll('details.thinking').forEach((d) => { d.open = true; });
    document.querySelectorAll('details.tool').forEach((d) => { if (d.querySelector('.diff')) d.open = true; });
  });
  if (cfg.screenshots) await page.screenshot({ path: path.join(cfg.screenshots, 'session.png') });
  await page.goto(base + 'stats', { waitUntil: 'load' });
  out.stats = { charts: await page.locator('.chart svg').count() };
  if (cfg.screenshots) await page.screenshot({ path: path.join(cfg.screenshots, 'stats.png'), fullPage: true });
  const dark = await newPage({ dark: true });
  await dark.goto(base + 'session?p=' + encodeURIComponent(cfg.showcaseSession), { waitUntil: 'load' });
  await dark.evaluate(() => document.querySelectorAll('details.tool').forEach((d) => { if (d.querySelector('.diff')) d.open = true; }));
  out.dark = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
  if (cfg.screenshots) await dark.screenshot({ path: path.join(cfg.screenshots, 'session-dark.png') });
  const phone = await newPage({ ctx: { viewport: { width: 390, height: 844 }, isMobile: true } });
  await phone.goto(base, { waitUntil: 'load' });
  // Nothing wider than the phone (a mobile viewport widens itself to what
  // overflows, so the width is compared with the phone's own).
  out.phone = await phone.evaluate(() => document.documentElement.scrollWidth);
  if (cfg.screenshots) await phone.screenshot({ path: path.join(cfg.screenshots, 'list-phone.png') });
  log('pages');

  // 7. The hostile corpus, served.
  out.hostileServed = [];
  for (const p of cfg.hostileSessions) {
    const hp = await newPage();
    await hp.goto(base + 'session?p=' + encodeURIComponent(p), { waitUntil: 'load' });
    out.hostileServed.push(await hostileCheck(hp, p));
    await hp.close();
  }
  const lp = await newPage();
  await lp.goto(base + '?agent=', { waitUntil: 'load' });
  out.hostileServed.push(await hostileCheck(lp, 'list'));
  await lp.goto(base + 'search?q=' + encodeURIComponent(cfg.hostileWord), { waitUntil: 'load' });
  out.hostileSearchHits = await lp.locator('.hit-row').count();
  out.hostileServed.push(await hostileCheck(lp, 'search'));
  await lp.goto(base + 'stats', { waitUntil: 'load' });
  out.hostileServed.push(await hostileCheck(lp, 'stats'));
  log('hostile served');

  // 8. The HTML export, from file://: the same messages, nothing fetched,
  // nothing from the corpus runs.
  const before8 = requests.length;
  const ep = await newPage();
  await ep.goto('file://' + cfg.exportFile, { waitUntil: 'load' });
  out.export = {
    ids: await ep.$$eval('#entries [data-i]', (xs) => xs.map((x) => x.id)),
    theme: await ep.evaluate(() => getComputedStyle(document.body).fontFamily),
  };
  // Printed: the content of every block closed on screen shows.
  const pp = await newPage();
  await pp.goto('file://' + cfg.showcaseExport, { waitUntil: 'load' });
  await pp.emulateMedia({ media: 'print' });
  out.exportPrint = await pp.$$eval('details:not([open])', (ds) => ds.filter((d) => d.checkVisibility()).map((d) => {
    const c = d.querySelector(':scope > :not(summary)');
    return { summary: d.querySelector('summary').innerText, shown: !c || c.checkVisibility() };
  }));
  await pp.close();
  // The exported tree switches branches in the page itself.
  const bp = await newPage();
  await bp.goto('file://' + cfg.branchExport, { waitUntil: 'load' });
  const eBefore = await bp.locator('#entries').innerText();
  await bp.locator('nav.branches a.branch:visible').first().click();
  const eAfter = await bp.locator('#entries').innerText();
  out.exportBranch = {
    beforeHasA: eBefore.includes(cfg.branchA), beforeHasB: eBefore.includes(cfg.branchB),
    afterHasA: eAfter.includes(cfg.branchA), afterHasB: eAfter.includes(cfg.branchB),
  };
  await bp.close();
  const sp = await newPage();
  await sp.goto(base + 'session?p=' + encodeURIComponent(cfg.exportSource), { waitUntil: 'load' });
  // Scroll to the end (pages load as the reader nears them) until every
  // entry is there.
  for (let i = 0; i < 50 && await sp.locator('#more').count(); i++) {
    await sp.evaluate(() => { const m = document.getElementById('more'); if (m) { m.scrollIntoView(); m.click(); } });
    await sp.waitForTimeout(200);
  }
  out.served = { ids: await sp.$$eval('#entries [data-i]', (xs) => xs.map((x) => x.id)) };
  out.hostileExport = [];
  for (const f of cfg.hostileExports) {
    const hp = await newPage();
    await hp.goto('file://' + f, { waitUntil: 'load' });
    out.hostileExport.push(await hostileCheck(hp, f));
    await hp.close();
  }
  out.exportRequests = requests.slice(before8).filter((u) => !u.startsWith(base) && !u.startsWith('file://') && !u.startsWith('data:'));
  log('export');
} catch (e) {
  out.error = String(e && e.stack || e);
} finally {
  out.dialogs = dialogs;
  out.foreignRequests = requests.filter((u) => !u.startsWith(cfg.base) && !u.startsWith('file://') && !u.startsWith('data:'));
  await browser.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}
