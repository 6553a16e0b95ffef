//! The rules file as written (`src/rules.toml`, or a user's file): what the
//! library compiles, and what `build.rs` reads to prepare the built-in
//! rules (it includes this file), so both read a rules file alike.

use serde::Deserialize;
use std::borrow::Cow;

/// A text of a rules file: borrowed for the built-in rules, owned for a
/// file read at run time.
pub(crate) type Text = Cow<'static, str>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RulesFile {
    #[serde(default)]
    pub(crate) allow: AllowSpec,
    #[serde(default)]
    pub(crate) rule: Vec<RuleSpec>,
    #[serde(default)]
    pub(crate) field: Vec<FieldSpec>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct AllowSpec {
    #[serde(default)]
    pub(crate) placeholders: Vec<Text>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleSpec {
    pub(crate) id: Text,
    pub(crate) description: Text,
    #[serde(default)]
    pub(crate) keywords: Vec<Text>,
    #[serde(default)]
    pub(crate) keywords_match_case: bool,
    pub(crate) regex: Text,
    #[serde(default)]
    pub(crate) group: usize,
    #[serde(default)]
    pub(crate) min_entropy: f64,
    #[serde(default)]
    pub(crate) needs_digit: bool,
    #[serde(default)]
    pub(crate) allow: Vec<Text>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FieldSpec {
    pub(crate) id: Text,
    #[serde(default)]
    pub(crate) keywords: Vec<Text>,
    pub(crate) key: Text,
    pub(crate) value: Text,
}
