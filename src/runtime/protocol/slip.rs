//! Recognisers for answers that slip out of the bolt format: markdown fences
//! and the lines around them, shell commands, code left out, content cut
//! off, HTML entities. Each is a pure function of a short piece of text (a
//! line, a fence's info string, a closed action's content); the parser
//! decides when to ask them, so its work stays linear.

pub(super) mod elision;
pub(super) mod entity;
pub(super) mod fence;
pub(super) mod path;
pub(super) mod plausible;
pub(super) mod shell;

#[cfg(test)]
mod tests;
