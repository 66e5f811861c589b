//! The message both PMI wire protocols carry: a command name (`cmd=NAME`) and
//! the other `key=value` pairs in wire order. One type for both; the marker
//! parameter keeps a PMI-1 line ([`crate::Message`], `codec.rs`) and a PMI-2
//! frame ([`crate::Pmi2Message`], `codec2.rs`) apart, since each protocol has
//! its own parser and encoder (and escaping) on its instantiation.

use std::marker::PhantomData;

/// PMI-1 ("simple PMI"): one newline-terminated line of space-separated pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pmi1 {}

/// PMI-2: a length-prefixed frame of `;`-terminated pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pmi2 {}

/// A PMI command or response: the `cmd` name plus the other pairs in wire
/// order (keys may repeat).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairs<Wire> {
    pub(crate) name: String,
    pub(crate) args: Vec<(String, String)>,
    wire: PhantomData<Wire>,
}

impl<Wire> Pairs<Wire> {
    /// A message `cmd=name` with no other pairs yet.
    pub fn new(name: impl Into<String>) -> Self {
        Pairs::from_parts(name.into(), Vec::new())
    }

    pub(crate) fn from_parts(name: String, args: Vec<(String, String)>) -> Self {
        Pairs {
            name,
            args,
            wire: PhantomData,
        }
    }

    /// Builder form of [`Pairs::push`].
    pub fn arg(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.push(key, value);
        self
    }

    /// Appends a pair (validated only when encoding).
    pub fn push(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.args.push((key.into(), value.into()));
    }

    /// The value of the `cmd` token.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The pairs after `cmd`, in wire order.
    pub fn args(&self) -> &[(String, String)] {
        &self.args
    }

    /// The value of the first occurrence of `key` (Hydra also resolves
    /// duplicates to the first one).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `key` parsed as an integer; `None` if absent or not a number.
    pub fn get_int<T: std::str::FromStr>(&self, key: &str) -> Option<T> {
        self.get(key).and_then(|v| v.trim().parse().ok())
    }

    /// `key` as a PMI boolean (`TRUE`/`FALSE`, any case); `None` if absent
    /// or neither.
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        let v = self.get(key)?.trim();
        if v.eq_ignore_ascii_case("true") {
            Some(true)
        } else if v.eq_ignore_ascii_case("false") {
            Some(false)
        } else {
            None
        }
    }

    /// The `rc` field; a response without one signals success, an
    /// unparsable one failure.
    pub fn rc(&self) -> i64 {
        self.get("rc").map_or(0, |v| v.trim().parse().unwrap_or(-1))
    }
}
