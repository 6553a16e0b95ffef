//! The rules file: parsing and compiling it, and finding secrets in text.

use crate::spec::{RuleSpec, RulesFile, Text};
use crate::RedactError;
use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::Anchored;
use regex::bytes::{Regex, RegexBuilder};
use regex_automata::dfa::{dense, Automaton as _};
use regex_automata::nfa::thompson;
use regex_automata::util::pool::Pool;
use regex_automata::{hybrid, Input};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The rules built into agentlog (`src/rules.toml`).
pub const BUILTIN_RULES: &str = include_str!("rules.toml");

/// [`BUILTIN_RULES`] as Rust (`build.rs`): a function that returns them
/// as a [`RulesFile`], every text borrowed from the binary.
mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
}

/// Text shorter than this holds no secret any rule finds; it is skipped.
pub(crate) const MIN_TEXT_LEN: usize = 8;

/// One compiled text rule.
#[derive(Debug)]
pub(crate) struct Rule {
    pub id: Text,
    pub description: Text,
    regex: LazyRegex,
    group: usize,
    min_entropy: f64,
    needs_digit: bool,
    allow: Vec<LazyRegex>,
    /// The screen that runs where the rule's keywords start, for a rule
    /// exactly like a built-in one whose every match starts with one of
    /// them (see [`StartScreen`]).
    starts: Option<StartScreen>,
}

/// One compiled field rule: a string value under a key that names a secret.
#[derive(Debug)]
pub(crate) struct FieldRule {
    pub id: Text,
    /// The key must hold one of these (lowercase ASCII, compared
    /// case-insensitively) for its regex to run; none: it always runs.
    keywords: Vec<String>,
    key: LazyRegex,
    value: LazyRegex,
}

/// What one kind of secret is, as the rules file describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleInfo {
    /// The kind, as reports name it.
    pub id: String,
    /// What it is.
    pub description: String,
}

/// A secret found in a piece of text: its byte range and its rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hit {
    pub start: usize,
    pub end: usize,
    pub rule: usize,
}

/// Every rule, compiled, with the keyword prefilter.
#[derive(Debug)]
pub(crate) struct Rules {
    pub rules: Vec<Rule>,
    pub fields: Vec<FieldRule>,
    placeholders: Vec<LazyRegex>,
    /// Keywords of every rule, ASCII case-insensitive.
    keywords: Keywords,
    /// For each keyword pattern, the rule it belongs to.
    keyword_rule: Vec<usize>,
    /// For each keyword pattern, its length.
    keyword_len: Vec<usize>,
    /// For each keyword pattern, the keyword when it must occur in exactly
    /// this case (the rule's `keywords_match_case`).
    keyword_exact: Vec<Option<Vec<u8>>>,
    /// Rules with no keywords: they always run.
    always: Vec<usize>,
}

/// A pattern checked when the rules are loaded and compiled the first time
/// it is needed: most rules never run in a process (their keywords do not
/// occur), so a short command does not pay for compiling them all. A rule
/// with a [`StartScreen`] asks it first; one without asks its screen (a
/// lazy DFA that only says whether the pattern matches, built in a fifth
/// of the time); the full regex is compiled when the screen says yes or has
/// searched [`SCREEN_BUDGET`]. The common words among the keywords
/// (`token`, `key`, `secret`) made four rules run on nearly every session,
/// and compiling their regexes was most of what `--redact` added to
/// exporting one; those rules now have start screens.
///
/// Patterns are compiled without Unicode, over bytes: classes, `\b`, `\s`
/// and case-insensitivity are ASCII (every secret any rule finds is ASCII,
/// and the keyword prefilter is ASCII case-insensitive anyway). Compiling a
/// Unicode class repeated `{1,64}` times took milliseconds, most of a short
/// redacting command's extra cost; ASCII compiles about four times faster
/// over all the rules (and searches within a few percent). A class such as
/// `[^\s"]` then matches the bytes of a non-ASCII character one by one, so
/// a match may start or end inside one: [`Rules::find`] widens each hit to
/// whole characters.
pub(crate) struct LazyRegex {
    pattern: Text,
    compiled: OnceLock<Option<Regex>>,
    /// The pattern as a lazy DFA that only says whether it matches; built
    /// the first time the pattern runs, in a fifth of the full regex's time.
    screen: OnceLock<Option<Screen>>,
    /// Bytes the screen has searched: past [`SCREEN_BUDGET`], the full
    /// regex (its literal prefilter makes it faster) is compiled and used.
    screened: AtomicUsize,
}

/// What a pattern's screen searches before the full regex replaces it: a
/// short command (one session) never compiles a regex that does not match,
/// a long one (an export of every session) pays for it once.
const SCREEN_BUDGET: usize = 1 << 20;

/// A forward lazy DFA of a pattern, without captures or a prefilter, with
/// its caches (one per thread at a time).
struct Screen {
    /// The length of the pattern's shortest match: a shorter text has none.
    min_len: usize,
    dfa: hybrid::dfa::DFA,
    caches: Pool<hybrid::dfa::Cache, Box<dyn Fn() -> hybrid::dfa::Cache + Send + Sync>>,
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyRegex")
            .field("pattern", &self.pattern)
            .finish_non_exhaustive()
    }
}

impl LazyRegex {
    fn new(pattern: Text) -> LazyRegex {
        LazyRegex {
            pattern,
            compiled: OnceLock::new(),
            screen: OnceLock::new(),
            screened: AtomicUsize::new(0),
        }
    }

    /// Returns the compiled pattern (`None` only if the regex engine
    /// refuses a pattern its parser accepted, when it never matches).
    pub(crate) fn get(&self) -> Option<&Regex> {
        self.compiled
            .get_or_init(|| build(&self.pattern).ok())
            .as_ref()
    }

    /// False when the pattern surely does not match in `text`; true when
    /// it may (then [`LazyRegex::get`] says where). Most texts a rule runs
    /// on hold its keywords but no secret: the screen answers for them
    /// without compiling the full regex.
    pub(crate) fn may_match(&self, text: &[u8]) -> bool {
        self.screen(text).unwrap_or(true)
    }

    /// True when `text` is shorter than any match of the pattern, as far
    /// as its screen knows (once the screen is built: a pattern whose full
    /// regex came first never skips a text this way).
    pub(crate) fn cannot_fit_in(&self, text: &[u8]) -> bool {
        self.screen
            .get()
            .and_then(Option::as_ref)
            .is_some_and(|s| text.len() < s.min_len)
    }

    /// True when the pattern matches somewhere in `text`.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        let text = text.as_bytes();
        self.screen(text)
            .unwrap_or_else(|| self.get().is_some_and(|r| r.is_match(text)))
    }

    /// Whether the pattern matches in `text`, by the screen; `None` when
    /// the screen does not answer: the full regex is compiled already, the
    /// screen's budget is spent, or the screen could not be built or gave
    /// up on this text.
    fn screen(&self, text: &[u8]) -> Option<bool> {
        if self.compiled.get().is_some() {
            return None;
        }
        let before = self.screened.fetch_add(text.len(), Ordering::Relaxed);
        if before.saturating_add(text.len()) > SCREEN_BUDGET {
            return None;
        }
        let screen = self
            .screen
            .get_or_init(|| Screen::new(&self.pattern))
            .as_ref()?;
        let mut cache = screen.caches.get();
        screen
            .dfa
            .try_search_fwd(&mut cache, &Input::new(text).earliest(true))
            .ok()
            .map(|m| m.is_some())
    }
}

impl Screen {
    /// Builds the screen of `pattern` (`None` when it cannot: the full
    /// regex is then always used).
    fn new(pattern: &str) -> Option<Screen> {
        let hir = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(pattern)
            .ok()?;
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .utf8(false)
                    .which_captures(thompson::WhichCaptures::None),
            )
            .build_from_hir(&hir)
            .ok()?;
        let dfa = hybrid::dfa::DFA::builder().build_from_nfa(nfa).ok()?;
        let for_caches = dfa.clone();
        Some(Screen {
            min_len: hir.properties().minimum_len().unwrap_or(usize::MAX),
            dfa,
            caches: Pool::new(Box::new(move || for_caches.create_cache())),
        })
    }
}

/// The anchored DFAs of the built-in rules whose every match starts with
/// one of their keywords (`build.rs` checks that, for every byte before the
/// match), as `build.rs` wrote them ([`BuiltStart`]).
mod starts {
    include!(concat!(env!("OUT_DIR"), "/starts.rs"));
}

/// A start screen `build.rs` made: the rule it is for (its id, pattern,
/// keywords, and whether they match case) and where its DFA is in
/// [`START_BYTES`].
struct BuiltStart {
    id: &'static str,
    pattern: &'static str,
    keywords: &'static [&'static str],
    match_case: bool,
    from: usize,
    len: usize,
}

/// The start screens [`Rules::find`] runs in one text before it lets the
/// full patterns of the rest decide.
const START_TRIES: usize = 4096;

/// Bytes aligned as a DFA's table must be to be read in place.
#[repr(C, align(8))]
struct Aligned<T: ?Sized>(T);

/// The DFAs [`starts::STARTS`] names, each at a multiple of 8.
static START_BYTES: &Aligned<[u8]> =
    &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/starts.bin")));

/// A rule's screen made when agentlog was built: its pattern, shortened so
/// that every match of the pattern begins with a match of it, as an
/// anchored DFA run where one of the rule's keywords starts in a text
/// (every match starts so). It replaces the screen built from the pattern
/// when the rule first runs ([`LazyRegex`]): the rules whose keywords are
/// common words (`key`, `token`, `secret`) ran in nearly every session,
/// and building their screens was most of what `--redact` still added to a
/// short command.
pub(crate) struct StartScreen {
    bytes: &'static [u8],
    /// The DFA read from `bytes` (in place; `None` if it does not read,
    /// when the rule's other screen is used).
    dfa: OnceLock<Option<dense::DFA<&'static [u32]>>>,
}

impl std::fmt::Debug for StartScreen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartScreen")
            .field("bytes", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

impl StartScreen {
    /// The start screen `build.rs` made for a rule exactly like `spec`
    /// (same id, pattern and keywords), if any.
    fn of(spec: &RuleSpec) -> Option<StartScreen> {
        let built = starts::STARTS.iter().find(|b| {
            b.id == spec.id
                && b.pattern == spec.regex
                && b.keywords
                    .iter()
                    .copied()
                    .eq(spec.keywords.iter().map(AsRef::as_ref))
                && b.match_case == spec.keywords_match_case
        })?;
        Some(StartScreen {
            bytes: START_BYTES.0.get(built.from..built.from + built.len)?,
            dfa: OnceLock::new(),
        })
    }

    fn dfa(&self) -> Option<&dense::DFA<&'static [u32]>> {
        self.dfa
            .get_or_init(|| dense::DFA::from_bytes(self.bytes).ok().map(|(dfa, _)| dfa))
            .as_ref()
    }

    /// False when no match of the pattern starts at byte `at` of `text`.
    fn may_start_at(dfa: &dense::DFA<&'static [u32]>, text: &[u8], at: usize) -> bool {
        let input = Input::new(text)
            .span(at..text.len())
            .anchored(regex_automata::Anchored::Yes)
            .earliest(true);
        !matches!(dfa.try_search_fwd(&input), Ok(None))
    }
}

fn build(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).unicode(false).build()
}

/// Checks `pattern`'s syntax (as it will be compiled) and returns
/// it to be compiled when first used, with its number of capture groups
/// (the whole match included).
fn compile(what: &dyn Fn() -> String, pattern: Text) -> Result<(LazyRegex, usize), RedactError> {
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(&pattern)
        .map_err(|e| RedactError::Rules {
            message: format!("{}: {e}", what()),
        })?;
    let groups = hir.properties().explicit_captures_len() + 1;
    Ok((LazyRegex::new(pattern), groups))
}

/// How a rules file is loaded.
#[derive(Clone, Copy)]
pub(crate) enum Check {
    /// Every pattern is parsed now, so a broken one is an error naming its
    /// rule (a rules file someone wrote).
    Patterns,
    /// The patterns are taken as they are: the built-in rules, which a test
    /// compiles (parsing all forty of them cost a short command about a
    /// millisecond).
    Trusted,
}

impl Rules {
    /// Parses and compiles a rules file.
    pub fn parse(text: &str) -> Result<Rules, RedactError> {
        let file: RulesFile = toml::from_str(text).map_err(|e| RedactError::Rules {
            message: e.to_string(),
        })?;
        Rules::load(file, Check::Patterns)
    }

    /// Loads the built-in rules ([`BUILTIN_RULES`], made Rust by the build
    /// script: nothing to parse, no text to copy), trusting their patterns
    /// (see [`Check::Trusted`]).
    pub(crate) fn builtin() -> Result<Rules, RedactError> {
        Rules::load(builtin::file(), Check::Trusted)
    }

    /// Compiles the rules of a rules file, checking its patterns as `check`
    /// says.
    fn load(file: RulesFile, check: Check) -> Result<Rules, RedactError> {
        // A trusted pattern is not parsed, so its number of groups is not
        // known: every `group` it names is taken to exist (a test checks
        // the built-in rules' groups).
        let lazy = |what: &dyn Fn() -> String, pattern: Text| match check {
            Check::Patterns => compile(what, pattern),
            Check::Trusted => Ok((LazyRegex::new(pattern), usize::MAX)),
        };
        let placeholders = file
            .allow
            .placeholders
            .into_iter()
            .map(|p| lazy(&|| "allow.placeholders".into(), p).map(|(r, _)| r))
            .collect::<Result<Vec<_>, _>>()?;
        let mut rules = Vec::new();
        let mut patterns = Vec::new();
        let mut keyword_rule = Vec::new();
        let mut keyword_len = Vec::new();
        let mut keyword_exact = Vec::new();
        let mut always = Vec::new();
        for (i, mut spec) in file.rule.into_iter().enumerate() {
            let id = spec.id.clone();
            let what = || format!("rule {id}");
            let starts = StartScreen::of(&spec);
            let (regex, groups) = lazy(&what, std::mem::take(&mut spec.regex))?;
            if spec.group >= groups {
                return Err(RedactError::Rules {
                    message: format!("{}: no capture group {}", what(), spec.group),
                });
            }
            if spec.keywords.is_empty() {
                always.push(i);
            }
            no_empty_keyword(&what, &spec.keywords)?;
            for k in spec.keywords {
                keyword_exact.push(spec.keywords_match_case.then(|| k.as_bytes().to_vec()));
                keyword_len.push(k.len());
                patterns.push(k);
                keyword_rule.push(i);
            }
            let allow = spec
                .allow
                .into_iter()
                .map(|p| lazy(&what, p).map(|(r, _)| r))
                .collect::<Result<Vec<_>, _>>()?;
            rules.push(Rule {
                id: spec.id,
                description: spec.description,
                regex,
                group: spec.group,
                min_entropy: spec.min_entropy,
                needs_digit: spec.needs_digit,
                allow,
                starts,
            });
        }
        let fields = file
            .field
            .into_iter()
            .map(|f| {
                let id = f.id.clone();
                let what = || format!("field {id}");
                no_empty_keyword(&what, &f.keywords)?;
                Ok(FieldRule {
                    keywords: f.keywords.iter().map(|k| k.to_ascii_lowercase()).collect(),
                    key: lazy(&what, f.key)?.0,
                    value: lazy(&what, f.value)?.0,
                    id: f.id,
                })
            })
            .collect::<Result<Vec<_>, RedactError>>()?;
        let keywords = Keywords::new(&patterns)?;
        Ok(Rules {
            rules,
            fields,
            placeholders,
            keywords,
            keyword_rule,
            keyword_len,
            keyword_exact,
            always,
        })
    }

    /// True when `secret` is a placeholder, not a secret.
    fn is_placeholder(&self, secret: &str, rule: &Rule) -> bool {
        self.placeholders
            .iter()
            .chain(rule.allow.iter())
            .any(|r| r.is_match(secret))
    }

    /// Returns the secrets in `text`, in order, none overlapping: those the
    /// rules match in the text as it is, and those they match once it is
    /// normalized ([`normalized`]: compatibility forms such as fullwidth
    /// letters folded, invisible characters dropped, `%XX` decoded), each
    /// as the span of the text that spells it.
    pub fn find(&self, text: &str) -> Vec<Hit> {
        let mut hits = self.find_as_is(text);
        let found = hits.len();
        // A hit of a disguised secret, unless one found already covers it.
        let free = |hits: &[Hit], start: usize, end: usize| {
            !hits.iter().any(|x| x.start < end && start < x.end)
        };
        if let Some(n) = normalized(text) {
            for h in self.find_as_is(&n.text) {
                let (start, end) = (n.origin[h.start].0, n.origin[h.end - 1].1);
                if free(&hits, start, end) {
                    hits.push(Hit {
                        start,
                        end,
                        rule: h.rule,
                    });
                }
            }
        }
        // A secret base64-encoded (a header, a config blob pasted whole):
        // each run of the base64 alphabet long enough to hold one is
        // decoded, and when what it spells is text holding a secret, the
        // whole run is the secret.
        for (start, end) in base64_runs(text) {
            if !free(&hits, start, end) {
                continue;
            }
            let decoded = decode_base64(&text[start..end]);
            if let Some(h) = decoded.and_then(|d| self.find_as_is(&d).first().copied()) {
                hits.push(Hit {
                    start,
                    end,
                    rule: h.rule,
                });
            }
        }
        if hits.len() > found {
            hits.sort_by_key(|h| h.start);
        }
        hits
    }

    /// [`Rules::find`] in `text` as it is.
    fn find_as_is(&self, text: &str) -> Vec<Hit> {
        let mut hits = Vec::new();
        if text.len() < MIN_TEXT_LEN {
            return hits;
        }
        let mut run = RuleSet::new(self.rules.len());
        for &i in &self.always {
            run.insert(i);
        }
        let bytes = text.as_bytes();
        // The rules with a start screen where a match may start: each
        // screen runs where the rule's keywords start until one says so.
        // Past START_TRIES runs in this text (a text that repeats a keyword
        // millions of times), every rule whose keywords occur counts as
        // one, and its full pattern (which scans the text once) decides.
        let mut may_start = RuleSet::new(self.rules.len());
        let mut tries = 0usize;
        self.keywords.each(bytes, &mut |k, end| {
            if let Some(exact) = &self.keyword_exact[k] {
                if bytes.get(end - exact.len()..end) != Some(exact.as_slice()) {
                    return;
                }
            }
            let rule = self.keyword_rule[k];
            run.insert(rule);
            if may_start.contains(rule) {
                return;
            }
            if let Some(dfa) = self.rules[rule].starts.as_ref().and_then(StartScreen::dfa) {
                tries += 1;
                if tries > START_TRIES
                    || StartScreen::may_start_at(dfa, bytes, end - self.keyword_len[k])
                {
                    may_start.insert(rule);
                }
            }
        });
        for (i, rule) in self.rules.iter().enumerate() {
            if !run.contains(i) {
                continue;
            }
            let may_match = match rule.starts.as_ref().and_then(StartScreen::dfa) {
                Some(_) => may_start.contains(i),
                None => !rule.regex.cannot_fit_in(bytes) && rule.regex.may_match(bytes),
            };
            if !may_match {
                continue;
            }
            let Some(regex) = rule.regex.get() else {
                continue;
            };
            if rule.group == 0 {
                for m in regex.find_iter(bytes) {
                    self.accept(&mut hits, i, rule, m.start(), m.end(), text);
                }
            } else {
                for caps in regex.captures_iter(bytes) {
                    let m = match caps.get(rule.group).or_else(|| caps.get(0)) {
                        Some(m) => m,
                        None => continue,
                    };
                    self.accept(&mut hits, i, rule, m.start(), m.end(), text);
                }
            }
        }
        hits.sort_by_key(|h| h.start);
        hits
    }

    fn accept(
        &self,
        hits: &mut Vec<Hit>,
        i: usize,
        rule: &Rule,
        start: usize,
        end: usize,
        text: &str,
    ) {
        let (start, end) = whole_chars(text, start, end);
        let secret = &text[start..end];
        if secret.is_empty()
            || hits.iter().any(|h| h.start < end && start < h.end)
            || (rule.needs_digit && !secret.bytes().any(|b| b.is_ascii_digit()))
            || (rule.min_entropy > 0.0 && entropy(secret) < rule.min_entropy)
            || self.is_placeholder(secret, rule)
        {
            return;
        }
        hits.push(Hit {
            start,
            end,
            rule: i,
        });
    }

    /// Returns the field rule (index) that makes `value` under `key` a
    /// secret, if any.
    pub fn field_match(&self, key: &str, value: &str) -> Option<usize> {
        if value.len() < MIN_TEXT_LEN {
            return None;
        }
        self.fields.iter().position(|f| {
            (f.keywords.is_empty() || f.keywords.iter().any(|k| contains_ignore_case(key, k)))
                && f.key.is_match(key)
                && f.value.is_match(value)
                && !self.placeholders.iter().any(|p| p.is_match(value))
        })
    }
}

/// Refuses an empty keyword (it would be in every text) of rule `what`.
fn no_empty_keyword(what: &dyn Fn() -> String, keywords: &[Text]) -> Result<(), RedactError> {
    if keywords.iter().any(|k| k.is_empty()) {
        return Err(RedactError::Rules {
            message: format!("{}: an empty keyword", what()),
        });
    }
    Ok(())
}

/// True when `text` holds `lower` (lowercase ASCII), ASCII case-insensitively.
fn contains_ignore_case(text: &str, lower: &str) -> bool {
    let (text, lower) = (text.as_bytes(), lower.as_bytes());
    text.len() >= lower.len()
        && text
            .windows(lower.len())
            .any(|w| w.eq_ignore_ascii_case(lower))
}

/// Widens `start..end` to the characters it touches: a byte pattern may
/// begin or end inside a non-ASCII character.
/// A text as the rules also search it, and where each of its bytes came
/// from.
struct Normalized {
    text: String,
    /// For each byte of `text`, the span of the original text it stands for.
    origin: Vec<(usize, usize)>,
}

/// True for a character that shows nothing: written inside a secret, it
/// hides it from a pattern and not from a reader.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}' | '\u{FEFF}'
    )
}

/// `text` with what can disguise a secret undone, when it holds any:
/// each character in its compatibility form (NFKC: fullwidth `ｓｋ－` is
/// `sk-`), invisible characters ([`is_invisible`]) dropped, and `%XX` of a
/// printable ASCII character decoded (a secret in a URL's query). `None`
/// when the text is plain ASCII without `%` (nothing to undo), which is
/// checked first and costs one pass over the bytes.
fn normalized(text: &str) -> Option<Normalized> {
    use unicode_normalization::UnicodeNormalization;
    let b = text.as_bytes();
    if b.iter().all(|&c| c.is_ascii() && c != b'%') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len());
    let mut changed = false;
    let hex = |c: u8| (c as char).to_digit(16);
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = i + c.len_utf8();
        if c == '%' {
            if let (Some(&h), Some(&l)) = (b.get(i + 1), b.get(i + 2)) {
                if let (Some(h), Some(l)) = (hex(h), hex(l)) {
                    let v = (h * 16 + l) as u8;
                    if (0x20..0x7f).contains(&v) {
                        out.push(v as char);
                        origin.push((i, i + 3));
                        changed = true;
                        chars.next();
                        chars.next();
                        continue;
                    }
                }
            }
        }
        if c.is_ascii() {
            out.push(c);
            origin.push((i, end));
            continue;
        }
        if is_invisible(c) {
            changed = true;
            continue;
        }
        let at = out.len();
        out.extend(std::iter::once(c).nfkc());
        origin.resize(out.len(), (i, end));
        changed |= out[at..].chars().ne(std::iter::once(c));
    }
    changed.then_some(Normalized { text: out, origin })
}

/// The shortest base64 run decoded: 24 characters spell 18 bytes, less
/// than the shortest secret a rule finds plus its context.
const BASE64_MIN: usize = 24;
/// The longest run decoded (longer ones are data, not a pasted secret).
const BASE64_MAX: usize = 16 * 1024;

/// The spans of `text` made of the base64 alphabet (standard or URL-safe,
/// `=` padding at the end) of a length that can hold a secret.
fn base64_runs(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let is_b64 = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_');
    let mut runs = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !is_b64(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_b64(b[i]) {
            i += 1;
        }
        while i < b.len() && b[i] == b'=' && i - start < BASE64_MAX + 2 {
            i += 1;
        }
        let len = i - start;
        // A run of letters alone is a word, not an encoding.
        if (BASE64_MIN..=BASE64_MAX).contains(&len)
            && b[start..i]
                .iter()
                .any(|c| c.is_ascii_digit() || matches!(c, b'+' | b'/' | b'-' | b'_' | b'='))
            && b[start..i].iter().any(|c| c.is_ascii_uppercase())
            && b[start..i].iter().any(|c| c.is_ascii_lowercase())
        {
            runs.push((start, i));
        }
    }
    runs
}

/// What `run` decodes to, when it is base64 of printable text.
fn decode_base64(run: &str) -> Option<String> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    use base64::Engine;
    let body = run.trim_end_matches('=');
    let bytes = STANDARD_NO_PAD
        .decode(body)
        .or_else(|_| URL_SAFE_NO_PAD.decode(body))
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    text.chars()
        .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
        .then_some(text)
}

fn whole_chars(text: &str, mut start: usize, mut end: usize) -> (usize, usize) {
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}

/// The keywords of every rule as one Aho-Corasick DFA, ASCII
/// case-insensitive, searched for every occurrence (overlapping).
///
/// The built-in rules' DFA is made when agentlog is built (`build.rs`
/// writes its transitions as tables, see [`Fixed`]); building it took a
/// short redacting command longer than anything else it added. A rules
/// file with other keywords has its DFA built when it is loaded.
///
/// A DFA takes each step from the state the step before reached, so one
/// search goes no faster than a load per byte (about 500 MB/s here, half an
/// export's redaction time). A long text is searched as [`LANES`] pieces
/// at once, interleaved, each piece starting the length of the longest
/// keyword less one before where it begins, so a keyword across a boundary
/// is still found (perhaps twice: the rules to run are a set).
struct Keywords {
    table: Table,
}

enum Table {
    /// Built when the rules were loaded.
    Built(Box<aho_corasick::dfa::DFA>),
    /// The built-in rules' keywords, from the tables `build.rs` made.
    Fixed,
}

/// The built-in rules' keyword DFA as `build.rs` wrote it: the keywords,
/// the byte classes, and for each state and class the next state (its
/// number times the number of classes, so that adding a byte's class gives
/// its transition); states from [`fixed::FIRST_MATCH`] on are match states,
/// whose keywords `MATCH_LIST` holds from `MATCH_AT[k]` to `MATCH_AT[k + 1]`.
mod fixed {
    include!(concat!(env!("OUT_DIR"), "/keywords.rs"));
}

/// Pieces a long text is searched as at once (four: see [`Keywords::each`]).
const LANES: usize = 4;

/// The shortest text searched in pieces: shorter ones, one piece.
const LANES_FROM: usize = 256;

impl Keywords {
    /// The DFA of `patterns`: the built-in one when they are the built-in
    /// rules' keywords, in their order.
    fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Keywords, RedactError> {
        if patterns.iter().map(AsRef::as_ref).eq(fixed::PATTERNS) {
            return Ok(Keywords {
                table: Table::Fixed,
            });
        }
        // The same options as build.rs uses for the built-in keywords.
        let dfa = aho_corasick::dfa::Builder::new()
            .ascii_case_insensitive(true)
            .prefilter(false)
            .build(patterns.iter().map(AsRef::as_ref))
            .map_err(|e| RedactError::Rules {
                message: format!("keywords: {e}"),
            })?;
        Ok(Keywords {
            table: Table::Built(Box::new(dfa)),
        })
    }

    /// Calls `found(keyword, end)` for every occurrence of a keyword in
    /// `text` that ends at byte `end`, in no particular order, some
    /// perhaps twice.
    fn each(&self, text: &[u8], found: &mut dyn FnMut(usize, usize)) {
        match &self.table {
            Table::Built(dfa) => scan(dfa.as_ref(), text, found),
            Table::Fixed => scan(&Fixed, text, found),
        }
    }
}

/// What [`scan`] needs of a keyword DFA.
trait Steps {
    type State: Copy;
    /// The unanchored start state.
    fn start(&self) -> Option<Self::State>;
    /// The state after `byte`.
    fn step(&self, state: Self::State, byte: u8) -> Self::State;
    /// True for a state that may be a match (checked by `matches`).
    fn special(&self, state: Self::State) -> bool;
    /// Reports the keywords that end at `end` in `state`.
    fn matches(&self, state: Self::State, end: usize, found: &mut dyn FnMut(usize, usize));
    /// The length of the longest keyword.
    fn longest(&self) -> usize;
}

impl Steps for aho_corasick::dfa::DFA {
    type State = StateID;

    fn start(&self) -> Option<StateID> {
        self.start_state(Anchored::No).ok()
    }

    #[inline]
    fn step(&self, state: StateID, byte: u8) -> StateID {
        self.next_state(Anchored::No, state, byte)
    }

    #[inline]
    fn special(&self, state: StateID) -> bool {
        self.is_special(state)
    }

    #[inline(never)]
    fn matches(&self, state: StateID, end: usize, found: &mut dyn FnMut(usize, usize)) {
        if self.is_match(state) {
            for i in 0..self.match_len(state) {
                found(self.match_pattern(state, i).as_usize(), end);
            }
        }
    }

    fn longest(&self) -> usize {
        self.max_pattern_len()
    }
}

/// The built-in keywords' DFA (see [`fixed`]).
struct Fixed;

impl Steps for Fixed {
    type State = u32;

    fn start(&self) -> Option<u32> {
        Some(fixed::START)
    }

    #[inline]
    fn step(&self, state: u32, byte: u8) -> u32 {
        // The table's length is a power of two: the mask keeps the index in
        // it without a bounds check (every state and class is inside it).
        let at = state as usize + usize::from(fixed::CLASSES[usize::from(byte)]);
        u32::from(fixed::NEXT[at & (fixed::NEXT.len() - 1)])
    }

    #[inline]
    fn special(&self, state: u32) -> bool {
        state >= fixed::FIRST_MATCH
    }

    #[inline(never)]
    fn matches(&self, state: u32, end: usize, found: &mut dyn FnMut(usize, usize)) {
        let k = ((state - fixed::FIRST_MATCH) / fixed::STRIDE) as usize;
        let (Some(&from), Some(&to)) = (fixed::MATCH_AT.get(k), fixed::MATCH_AT.get(k + 1)) else {
            return;
        };
        for &p in fixed::MATCH_LIST
            .get(from as usize..to as usize)
            .unwrap_or_default()
        {
            found(p as usize, end);
        }
    }

    fn longest(&self) -> usize {
        fixed::MAX_LEN
    }
}

/// Calls `found(keyword, end)` for every occurrence of a keyword of `dfa`
/// in `text` (see [`Keywords::each`]).
fn scan<D: Steps>(dfa: &D, text: &[u8], found: &mut dyn FnMut(usize, usize)) {
    let Some(start) = dfa.start() else {
        return;
    };
    let longest = dfa.longest();
    if text.len() < LANES_FROM || longest == 0 {
        run(dfa, start, text, 0, found);
        return;
    }
    // Piece `l` holds the ends from `l * piece` to the next piece (the
    // last to the end of the text) and starts `longest - 1` bytes
    // before them (the first at 0). The pieces are searched together
    // for as long as the shortest, then each to its end.
    let piece = text.len() / LANES;
    let back = longest - 1;
    let from: [usize; LANES] = std::array::from_fn(|l| (l * piece).saturating_sub(back));
    let to: [usize; LANES] = std::array::from_fn(|l| {
        if l + 1 == LANES {
            text.len()
        } else {
            (l + 1) * piece
        }
    });
    let together = (0..LANES).map(|l| to[l] - from[l]).min().unwrap_or(0);
    let lane = |l: usize| &text[from[l]..from[l] + together];
    let (a, b, c, d) = (lane(0), lane(1), lane(2), lane(3));
    let mut sid = [start; LANES];
    for (i, (((&x, &y), &z), &w)) in a.iter().zip(b).zip(c).zip(d).enumerate() {
        sid[0] = dfa.step(sid[0], x);
        sid[1] = dfa.step(sid[1], y);
        sid[2] = dfa.step(sid[2], z);
        sid[3] = dfa.step(sid[3], w);
        if dfa.special(sid[0]) | dfa.special(sid[1]) | dfa.special(sid[2]) | dfa.special(sid[3]) {
            for (l, &s) in sid.iter().enumerate() {
                if dfa.special(s) {
                    dfa.matches(s, from[l] + i + 1, found);
                }
            }
        }
    }
    for l in 0..LANES {
        let rest = from[l] + together;
        run(dfa, sid[l], &text[rest..to[l]], rest, found);
    }
}

/// Searches `piece`, which starts at byte `offset` of the text, from
/// `state`, reporting as [`Keywords::each`] does.
#[inline]
fn run<D: Steps>(
    dfa: &D,
    mut state: D::State,
    piece: &[u8],
    offset: usize,
    found: &mut dyn FnMut(usize, usize),
) {
    for (at, &b) in piece.iter().enumerate() {
        state = dfa.step(state, b);
        if dfa.special(state) {
            dfa.matches(state, offset + at + 1, found);
        }
    }
}

impl std::fmt::Debug for Keywords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, patterns) = match &self.table {
            Table::Built(dfa) => ("built", dfa.patterns_len()),
            Table::Fixed => ("fixed", fixed::PATTERNS.len()),
        };
        f.debug_struct("Keywords")
            .field("table", &kind)
            .field("patterns", &patterns)
            .finish()
    }
}

/// The rules to run on one text: a bit per rule, on the stack for up to 128
/// rules.
enum RuleSet {
    Small(u128),
    Large(Vec<bool>),
}

impl RuleSet {
    fn new(n: usize) -> RuleSet {
        if n <= 128 {
            RuleSet::Small(0)
        } else {
            RuleSet::Large(vec![false; n])
        }
    }

    fn insert(&mut self, i: usize) {
        match self {
            RuleSet::Small(bits) => *bits |= 1 << i,
            RuleSet::Large(v) => v[i] = true,
        }
    }

    fn contains(&self, i: usize) -> bool {
        match self {
            RuleSet::Small(bits) => bits & (1 << i) != 0,
            RuleSet::Large(v) => v[i],
        }
    }
}

/// Returns the Shannon entropy of `s` in bits per byte.
pub(crate) fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {

    #[test]
    fn every_built_in_pattern_compiles() {
        // The built-in rules load without their patterns being parsed:
        // here every one is parsed and compiled.
        let rules = Rules::parse(crate::BUILTIN_RULES).unwrap();
        for r in &rules.rules {
            assert!(r.regex.get().is_some(), "{}", r.id);
            assert!(r.allow.iter().all(|a| a.get().is_some()), "{}", r.id);
        }
        for f in &rules.fields {
            assert!(f.key.get().is_some() && f.value.get().is_some(), "{}", f.id);
        }
        assert!(rules.placeholders.iter().all(|p| p.get().is_some()));
        // A pattern that does not parse is refused when the rules load.
        let bad = "[[rule]]\nid = \"x\"\ndescription = \"x\"\nregex = \"(unclosed\"\n";
        assert!(Rules::parse(bad).is_err());
    }

    use super::*;

    #[test]
    fn the_builtin_rules_load_as_their_toml_says() {
        let fast = Rules::builtin().unwrap();
        let parsed = Rules::parse(BUILTIN_RULES).unwrap();
        let rule = |r: &Rule| {
            format!(
                "{} {} {:?} {} {} {} {:?}",
                r.id,
                r.description,
                r.regex.pattern,
                r.group,
                r.min_entropy,
                r.needs_digit,
                r.allow.iter().map(|a| &a.pattern).collect::<Vec<_>>()
            )
        };
        let field = |f: &FieldRule| {
            format!(
                "{} {:?} {} {}",
                f.id, f.keywords, f.key.pattern, f.value.pattern
            )
        };
        assert_eq!(
            fast.rules.iter().map(rule).collect::<Vec<_>>(),
            parsed.rules.iter().map(rule).collect::<Vec<_>>()
        );
        assert_eq!(
            fast.fields.iter().map(field).collect::<Vec<_>>(),
            parsed.fields.iter().map(field).collect::<Vec<_>>()
        );
        assert_eq!(
            fast.placeholders
                .iter()
                .map(|p| &p.pattern)
                .collect::<Vec<_>>(),
            parsed
                .placeholders
                .iter()
                .map(|p| &p.pattern)
                .collect::<Vec<_>>()
        );
        assert_eq!(fast.always, parsed.always);
        // The keywords: which rule each is of, its length and whether it
        // must match case; and which rules have a start screen.
        assert_eq!(fast.keyword_rule, parsed.keyword_rule);
        assert_eq!(fast.keyword_len, parsed.keyword_len);
        assert_eq!(fast.keyword_exact, parsed.keyword_exact);
        assert!(fast.keyword_exact.iter().any(Option::is_some));
        let screened = |r: &Rules| {
            r.rules
                .iter()
                .map(|r| r.starts.is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(screened(&fast), screened(&parsed));
    }

    #[test]
    fn the_builtin_rules_compile() {
        let rules = Rules::parse(BUILTIN_RULES).unwrap();
        assert!(rules.rules.len() >= 30, "{}", rules.rules.len());
        let mut ids: Vec<&str> = rules.rules.iter().map(|r| r.id.as_ref()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), rules.rules.len(), "rule ids are unique");
    }

    #[test]
    fn a_broken_rules_file_is_an_error_naming_the_rule() {
        let err = Rules::parse("[[rule]]\nid = \"x\"\ndescription = \"d\"\nregex = \"(\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("rule x"), "{err}");
        let err =
            Rules::parse("[[rule]]\nid = \"y\"\ndescription = \"d\"\nregex = \"a\"\ngroup = 2\n")
                .unwrap_err()
                .to_string();
        assert!(err.contains("no capture group 2"), "{err}");
        // An empty keyword, of a text rule or of a field rule.
        let err = Rules::parse(
            "[[rule]]\nid = \"z\"\ndescription = \"d\"\nkeywords = [\"\"]\nregex = \"a\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("rule z: an empty keyword"), "{err}");
        let err = Rules::parse(
            "[[field]]\nid = \"f\"\nkeywords = [\"pass\", \"\"]\nkey = \"a\"\nvalue = \"b\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("field f: an empty keyword"), "{err}");
    }

    #[test]
    fn a_hit_inside_a_character_covers_the_whole_character() {
        // The pattern counts bytes: three of them end inside the second
        // `é`, and a hit must still cut the text at characters.
        let rules = Rules::parse(
            "[[rule]]\nid = \"x\"\ndescription = \"d\"\nregex = 'k=([^\\s]{3})'\ngroup = 1\n",
        )
        .unwrap();
        let text = "k=éé and k=aé!";
        let found: Vec<&str> = rules
            .find(text)
            .iter()
            .map(|h| &text[h.start..h.end])
            .collect();
        assert_eq!(found, ["éé", "aé"]);
        // ASCII rules next to non-ASCII text: the boundary `\b` is ASCII.
        let rules = Rules::parse(BUILTIN_RULES).unwrap();
        let key = "ghp_0123456789abcdefABCDEF0123456789abcd";
        let text = format!("→{key}✓ «{key}»");
        let found: Vec<&str> = rules
            .find(&text)
            .iter()
            .map(|h| &text[h.start..h.end])
            .collect();
        assert_eq!(found, [key, key]);
    }

    #[test]
    fn keywords_that_match_case_count_only_in_their_case() {
        let rules = |exact: bool| {
            Rules::parse(&format!(
                "[[rule]]\nid = \"x\"\ndescription = \"d\"\nkeywords = [\"TOK\"]\nkeywords_match_case = {exact}\nregex = '(?i)tok=[a-z]{{8}}'\n"
            ))
            .unwrap()
        };
        let found = |r: &Rules, t: &str| r.find(t).len();
        // The keyword in another case: the rule does not run.
        assert_eq!(found(&rules(true), "a tok=abcdefgh"), 0);
        assert_eq!(found(&rules(true), "a Tok=abcdefgh"), 0);
        // In its case, it does (and then finds every match its pattern has).
        assert_eq!(found(&rules(true), "a TOK=abcdefgh, tok=abcdefgh"), 2);
        // Without the option, any case.
        assert_eq!(found(&rules(false), "a tok=abcdefgh"), 1);
        // The built-in .env rule still finds upper-case assignments.
        let builtin = Rules::builtin().unwrap();
        let text = "export GITLAB_API_TOKEN=f00dfeed1234abcd";
        let hits = builtin.find(text);
        assert_eq!(hits.len(), 1, "{text}");
        assert_eq!(builtin.rules[hits[0].rule].id, "env-secret");
    }

    #[test]
    fn every_key_a_builtin_field_rule_matches_holds_one_of_its_keywords() {
        // The key regexes are case-insensitive alternations of a few names:
        // read without `(?i)`, each is a finite set of lowercase keys, all
        // listed by the literal extractor, and every one must pass the
        // keyword check (or the rule would never see it).
        use regex_syntax::hir::literal::{ExtractKind, Extractor};
        let rules = Rules::builtin().unwrap();
        for f in &rules.fields {
            assert!(!f.keywords.is_empty(), "{}", f.id);
            let lower = f.key.pattern.strip_prefix("(?i)").unwrap();
            let hir = regex_syntax::ParserBuilder::new()
                .unicode(false)
                .utf8(false)
                .build()
                .parse(lower)
                .unwrap();
            let mut extractor = Extractor::new();
            extractor.kind(ExtractKind::Prefix).limit_total(100_000);
            let keys = extractor.extract(&hir);
            assert!(keys.is_exact(), "{}: {keys:?}", f.id);
            let keys = keys.literals().unwrap();
            assert!(keys.len() >= 2, "{}", f.id);
            for key in keys {
                let key = std::str::from_utf8(key.as_bytes()).unwrap();
                assert!(f.key.is_match(key), "{}: {key}", f.id);
                let upper = key.to_ascii_uppercase();
                for k in [key, upper.as_str()] {
                    assert!(
                        f.keywords.iter().any(|w| contains_ignore_case(k, w)),
                        "{}: {k} holds none of {:?}",
                        f.id,
                        f.keywords
                    );
                }
            }
        }
        // Keys without a keyword are not secrets, whatever their value.
        assert_eq!(rules.field_match("sessionId", "0123456789abcdef"), None);
        assert!(rules.field_match("X-Api-Key", "0123456789abcdef").is_some());
        assert!(rules
            .field_match("AUTHORIZATION", "dXNlcjpwYXNzd29yZA")
            .is_some());
    }

    /// Texts near what the rules look for: planted secrets of every kind,
    /// pieces of them, and random runs of keywords, separators and
    /// characters.
    fn texts_near_secrets() -> Vec<String> {
        let mut texts = Vec::new();
        for seed in 0..4 {
            for p in agentlog_bench::secrets::planted(seed) {
                let t = &p.text;
                texts.push(t.clone());
                for cut in [t.len() / 3, t.len() / 2, t.len() - 1] {
                    if let (Some(a), Some(b)) = (t.get(..cut), t.get(cut..)) {
                        texts.push(a.to_string());
                        texts.push(b.to_string());
                    }
                }
            }
            for (_, secret, key) in agentlog_bench::secrets::planted_fields(seed) {
                texts.push(secret);
                texts.push(key.to_string());
            }
        }
        let pieces = [
            "token",
            "Key",
            "SECRET",
            "passwd",
            "auth",
            "=",
            ":",
            " ",
            "\"",
            "'",
            "\\",
            "\n",
            "ghp_",
            "sk-",
            "AKIA",
            "eyJ",
            "Bearer ",
            "authorization: Basic ",
            "://",
            "@",
            "é",
            "_",
            ".",
            "-",
            "xoxb-",
            "PRIVATE KEY",
            "-----BEGIN ",
            "AccountKey=",
            "sig=",
            "M",
        ];
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        for _ in 0..3000 {
            let mut t = String::new();
            for _ in 0..1 + next(12) {
                if next(3) == 0 {
                    for _ in 0..1 + next(60) {
                        t.push(ALNUM[next(ALNUM.len() as u64) as usize] as char);
                    }
                } else {
                    t.push_str(pieces[next(pieces.len() as u64) as usize]);
                }
            }
            texts.push(t);
        }
        texts
    }

    #[test]
    fn a_screen_answers_as_the_full_regex_does() {
        let texts = texts_near_secrets();
        let rules = Rules::builtin().unwrap();
        let mut patterns: Vec<&LazyRegex> = Vec::new();
        for r in &rules.rules {
            patterns.push(&r.regex);
            patterns.extend(&r.allow);
        }
        for f in &rules.fields {
            patterns.extend([&f.key, &f.value]);
        }
        patterns.extend(&rules.placeholders);
        let (mut answered, mut matched) = (0, 0);
        for p in patterns {
            // A copy whose screen budget no text spends, beside the full
            // regex.
            let screen = LazyRegex::new(p.pattern.clone());
            let full = p.get().unwrap();
            for t in &texts {
                let want = full.is_match(t.as_bytes());
                if let Some(got) = screen.screen(t.as_bytes()) {
                    assert_eq!(got, want, "{} on {t:?}", p.pattern);
                    answered += 1;
                    matched += usize::from(got);
                }
                assert!(!want || screen.may_match(t.as_bytes()), "{}", p.pattern);
            }
            assert!(screen.compiled.get().is_none(), "{}", p.pattern);
        }
        // The screens answered nearly always, and matched often enough for
        // the comparison to mean something.
        assert!(answered > 200_000, "{answered}");
        assert!(matched > 2_000, "{matched}");
    }

    #[test]
    fn screened_and_compiled_rules_find_the_same_secrets() {
        let texts = texts_near_secrets();
        let screened = Rules::builtin().unwrap();
        let compiled = Rules::builtin().unwrap();
        for r in &compiled.rules {
            r.regex.get().unwrap();
        }
        let found = same_hits(&screened, &compiled, &texts);
        assert!(found > 500, "{found}");
        // Past its budget a pattern compiles its full regex and keeps it.
        let fresh = Rules::builtin().unwrap();
        let rule = named(&fresh, "env-secret");
        assert!(rule.regex.compiled.get().is_none());
        let long = "the TOKEN count is high; ".repeat(SCREEN_BUDGET / 20);
        assert!(fresh.find(&long).is_empty());
        assert!(rule.regex.compiled.get().is_some());
    }

    /// Every keyword occurrence `Keywords::each` reports, as a set of
    /// (keyword, end), beside what Aho-Corasick's own overlapping search
    /// finds.
    fn both_ways(k: &Keywords, ac: &aho_corasick::AhoCorasick, text: &[u8]) {
        let mut got = std::collections::BTreeSet::new();
        k.each(text, &mut |p, end| {
            got.insert((p, end));
        });
        let want: std::collections::BTreeSet<_> = ac
            .find_overlapping_iter(text)
            .map(|m| (m.pattern().as_usize(), m.end()))
            .collect();
        assert_eq!(got, want, "{} bytes", text.len());
    }

    #[test]
    fn the_builtin_keywords_are_searched_in_the_tables_build_rs_made() {
        let rules = Rules::builtin().unwrap();
        assert!(
            matches!(rules.keywords.table, Table::Fixed),
            "{:?}",
            rules.keywords
        );
        let words: Vec<String> = fixed::PATTERNS.iter().map(|w| w.to_string()).collect();
        assert!(words.len() > 50, "{}", words.len());
        let ac = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&words)
            .unwrap();
        let built = Keywords {
            table: Table::Built(Box::new(
                aho_corasick::dfa::Builder::new()
                    .ascii_case_insensitive(true)
                    .prefilter(false)
                    .build(&words)
                    .unwrap(),
            )),
        };
        // Every keyword, in three cases, at the start, middle and end of
        // texts shorter and longer than LANES_FROM; then texts of every
        // keyword run together, where they overlap one another.
        let mut texts = Vec::new();
        for w in &words {
            for case in [w.clone(), w.to_ascii_lowercase(), w.to_ascii_uppercase()] {
                for len in [case.len(), 40, LANES_FROM + 7] {
                    let len = len.max(case.len());
                    for at in [0, (len - case.len()) / 2, len - case.len()] {
                        let mut text = vec![b'.'; len];
                        text[at..at + case.len()].copy_from_slice(case.as_bytes());
                        texts.push(text);
                    }
                }
            }
        }
        texts.push(words.concat().into_bytes());
        texts.push(words.join(" ").to_ascii_uppercase().into_bytes());
        texts.push(words.iter().rev().cloned().collect::<String>().into_bytes());
        texts.push((0..=255u8).cycle().take(3000).collect());
        for text in &texts {
            both_ways(&rules.keywords, &ac, text);
            both_ways(&built, &ac, text);
        }
    }

    #[test]
    fn keywords_are_found_across_the_pieces_a_long_text_is_searched_in() {
        let words: Vec<String> = ["SharedAccessKey=", "token", "sk-", "Q~", "eyJ", "://"]
            .map(String::from)
            .to_vec();
        let k = Keywords::new(&words).unwrap();
        let ac = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&words)
            .unwrap();
        // Each keyword at every offset of texts shorter and longer than
        // LANES_FROM, so that some fall across every boundary between
        // pieces, at their start, end and middle, in either case.
        let mut checked = 0;
        for len in [40, LANES_FROM - 1, LANES_FROM, LANES_FROM + 3, 1031] {
            for w in &words {
                for case in [
                    w.to_string(),
                    w.to_ascii_lowercase(),
                    w.to_ascii_uppercase(),
                ] {
                    for at in 0..=len - case.len() {
                        let mut text = vec![b'x'; len];
                        text[at..at + case.len()].copy_from_slice(case.as_bytes());
                        both_ways(&k, &ac, &text);
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
        // Many keywords, overlapping one another.
        let dense = "sk-tokenQ~eyJ://sharedaccesskey=".repeat(40);
        both_ways(&k, &ac, dense.as_bytes());
        both_ways(&k, &ac, b"");
    }

    /// Checks that `a` and `b` find the same secrets in each of `texts`;
    /// returns how many they found.
    fn same_hits(a: &Rules, b: &Rules, texts: &[String]) -> usize {
        let mut found = 0;
        for t in texts {
            let hits = b.find(t);
            assert_eq!(a.find(t), hits, "{t:?}");
            found += hits.len();
        }
        found
    }

    /// The rule of `rules` called `id`.
    fn named<'a>(rules: &'a Rules, id: &str) -> &'a Rule {
        rules.rules.iter().find(|r| r.id == id).unwrap()
    }

    #[test]
    fn a_rule_does_not_run_on_a_text_shorter_than_its_shortest_match() {
        let rules = Rules::builtin().unwrap();
        let telegram = named(&rules, "telegram-bot-token");
        // Its matches do not start with its keyword (`:AA`), so it has no
        // start screen: it runs on a text that holds the keyword, and its
        // screen is built on first use.
        assert!(telegram.starts.is_none());
        assert!(rules.find("a :AA with nothing to see").is_empty());
        assert!(telegram.regex.cannot_fit_in(&[b'1'; 43]));
        assert!(!telegram.regex.cannot_fit_in(&[b'1'; 44]));
        // `find` does not ask its screen about a shorter text, and does
        // about a text that is long enough.
        let searched = || telegram.regex.screened.load(Ordering::Relaxed);
        let before = searched();
        assert!(rules
            .find("12345678:AA is shorter than 44 bytes")
            .is_empty());
        assert_eq!(searched(), before);
        let long = "12345678:AA is in a text long enough to hold a Telegram bot token";
        assert!(long.len() >= 44 && rules.find(long).is_empty());
        assert_eq!(searched(), before + long.len());
        let token = format!("123456789:AA{}", "a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVw");
        let hits = rules.find(&token);
        assert_eq!(hits.len(), 1, "{token}");
        assert_eq!(rules.rules[hits[0].rule].id, "telegram-bot-token");
    }

    #[test]
    fn start_screens_run_where_the_keywords_start() {
        let rules = Rules::builtin().unwrap();
        let with: Vec<&str> = rules
            .rules
            .iter()
            .filter(|r| r.starts.as_ref().and_then(StartScreen::dfa).is_some())
            .map(|r| r.id.as_ref())
            .collect();
        for id in [
            "high-entropy-secret",
            "secret-assignment",
            "discord-bot-token",
            "bearer-token",
            "anthropic-api-key",
        ] {
            assert!(with.contains(&id), "{id} in {with:?}");
        }
        // Matches of these need not start with a keyword.
        for id in ["telegram-bot-token", "env-secret", "private-key"] {
            assert!(!with.contains(&id), "{id} in {with:?}");
        }
        // A rule with a start screen builds no screen from its pattern, and
        // compiles its regex only for a text where a match may start.
        let rule = |id: &str| named(&rules, id);
        let common = "the token count is high; the key is in the lock; ".repeat(50);
        assert!(rules.find(&common).is_empty());
        for id in ["high-entropy-secret", "secret-assignment"] {
            assert!(rule(id).regex.screen.get().is_none(), "{id}");
            assert!(rule(id).regex.compiled.get().is_none(), "{id}");
        }
        // Discord bot tokens: a keyword in another case, or inside a word,
        // starts none.
        let token = format!(
            "MT{}.{}.{}",
            "a1B2c3D4e5".repeat(2) + "xY",
            "Ab3dE6",
            "Zq9Xw8Vu7Ts6Rp5On4Ml3Kj2Ih1"
        );
        let hits = rules.find(&token);
        assert_eq!(hits.len(), 1, "{token}");
        assert_eq!(rules.rules[hits[0].rule].id, "discord-bot-token");
        assert!(rules.find(&token.replacen("MT", "mt", 1)).is_empty());
        assert!(rules.find(&format!("x{token}")).is_empty());
        assert_eq!(rules.find(&format!("-{token}")).len(), 1);
    }

    #[test]
    fn a_text_that_repeats_keywords_is_screened_in_bounded_work() {
        let rules = Rules::builtin().unwrap();
        let rule = named(&rules, "high-entropy-secret");
        // Fewer keyword starts than START_TRIES: the start screen decides.
        let few = "key ".repeat(START_TRIES / 2);
        assert!(rules.find(&few).is_empty());
        assert!(rule.regex.compiled.get().is_none());
        // Far more: past START_TRIES screens the full pattern decides (it
        // scans the text once), though no match starts anywhere.
        let many = "key".repeat(200_000);
        assert!(rules.find(&many).is_empty());
        assert!(rule.regex.compiled.get().is_some());
        // And it finds a secret at the end of such a text.
        let secret = "api_key=Zq9Xw8Vu7Ts6Rp5On4Ml3Kj2Ih1Gf0Ed";
        let many = format!("{many}{secret}");
        let hits = rules.find(&many);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(&many[hits[0].start..hits[0].end], &secret[8..]);
    }

    #[test]
    fn start_screens_find_what_the_full_patterns_find() {
        let mut texts = texts_near_secrets();
        let more: Vec<String> = texts
            .iter()
            .flat_map(|t| ["a", "_", " ", "-", "\\n", "\r", "\n", "é"].map(|p| format!("{p}{t}")))
            .collect();
        texts.extend(more);
        let screened = Rules::builtin().unwrap();
        let mut plain = Rules::builtin().unwrap();
        for r in &mut plain.rules {
            r.starts = None;
        }
        let found = same_hits(&screened, &plain, &texts);
        assert!(found > 2_000, "{found}");
        // What build.rs concluded of each rule it made a start screen for:
        // every match begins where one of the rule's keywords does.
        let mut checked = 0;
        for t in &texts {
            let bytes = t.as_bytes();
            let mut starts = std::collections::BTreeSet::new();
            screened.keywords.each(bytes, &mut |k, end| {
                let exact = screened.keyword_exact[k].as_deref();
                if exact.is_none_or(|e| bytes.get(end - e.len()..end) == Some(e)) {
                    starts.insert((screened.keyword_rule[k], end - screened.keyword_len[k]));
                }
            });
            for (i, r) in screened.rules.iter().enumerate() {
                if r.starts.is_none() {
                    continue;
                }
                for m in r.regex.get().unwrap().find_iter(bytes) {
                    assert!(starts.contains(&(i, m.start())), "{} in {t:?}", r.id);
                    checked += 1;
                }
            }
        }
        assert!(checked > 1_000, "{checked}");
    }

    #[test]
    fn entropy_of_simple_strings() {
        assert_eq!(entropy("aaaa"), 0.0);
        assert!((entropy("abab") - 1.0).abs() < 1e-9);
        assert!((entropy("abcd") - 2.0).abs() < 1e-9);
    }

    #[test]
    fn placeholders_are_not_secrets() {
        let rules = Rules::parse(BUILTIN_RULES).unwrap();
        // The same rules with no placeholders: each text below is one a
        // rule finds, so that it is the placeholders that let it pass.
        let start = BUILTIN_RULES.find("placeholders = [").unwrap();
        let end = start + BUILTIN_RULES[start..].find("\n]").unwrap() + 2;
        let bare = Rules::parse(&format!(
            "{}placeholders = []{}",
            &BUILTIN_RULES[..start],
            &BUILTIN_RULES[end..]
        ))
        .unwrap();
        for text in [
            "DB_PASSWORD=${DB_PASSWORD}",
            "GITHUB_TOKEN=changeme",
            "postgres://user:$PASS@localhost/db",
            "postgres://u:$pass@h/db",
            "DB_PASSWORD=$db_password",
            "DB_PASSWORD=$env:DB_PASSWORD",
            "DB_PASSWORD={dbPassword}",
            "DB_PASSWORD={db_password}",
            "DB_PASSWORD=%DB_PASSWORD%",
            "DB_PASSWORD=%{DB_PASSWORD}",
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
            "OPENAI_API_KEY=sk-proj-...",
        ] {
            assert!(!bare.find(text).is_empty(), "no rule finds {text}");
            assert!(rules.find(text).is_empty(), "{text}");
        }
        assert_eq!(rules.find("DB_PASSWORD=hunter2x").len(), 1);
        // Passwords that only begin like a reference or hold a word of
        // the placeholders are secrets.
        for secret in [
            "$uperS3cretPw9",
            "%40bcDef123x",
            "{Zq8wPa55}",
            "myExampleP4ss",
            "p4ss...word9",
            "p4ss…word9",
        ] {
            for text in [
                format!("postgres://admin:{secret}@db.internal:5432/app"),
                format!("DB_PASSWORD={secret}"),
            ] {
                let found = rules.find(&text);
                assert!(
                    found.iter().any(|f| text[f.start..f.end].contains(secret)),
                    "{text}: {found:?}"
                );
            }
        }
    }
}
