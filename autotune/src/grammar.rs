//! The grammar of a kernel source, derived line by line: each line is a rule of a type
//! (statement, if condition, for-loop header split in three, else, or fixed text), with the
//! names it declares and uses, so that a line is only moved where its variables exist.

use std::collections::BTreeSet;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// Preprocessor, braces, comments, signatures, declarations outside functions: never edited.
    Fixed,
    /// A complete statement ending in ';' (a declaration or an expression).
    Statement,
    /// `if (cond)` with whatever follows; `cond` can be replaced by another if's.
    If { cond: String },
    /// `for (init; cond; step)`; each part can be replaced by the same part of another loop.
    For { init: String, cond: String, step: String },
    /// `} else {` or `else`.
    Else,
}

#[derive(Clone, Debug)]
pub struct Line {
    pub text: String,
    pub kind: LineKind,
    /// Index of the function body the line is in (None outside functions).
    pub function: Option<usize>,
    /// Brace depth before the line.
    pub depth: usize,
    /// Names this line declares (locals and parameters).
    pub declares: BTreeSet<String>,
    /// Identifiers this line uses.
    pub uses: BTreeSet<String>,
    /// The preprocessor branches the line is in: (line of the #if, branch number) outermost first.
    pub pp: Vec<(usize, u32)>,
    /// Whether the line is a function signature (its declarations are parameters).
    pub signature: bool,
}

#[derive(Clone, Debug)]
pub struct Grammar {
    pub lines: Vec<Line>,
    /// Names declared somewhere inside a function (the ones scope checks care about).
    pub locals: BTreeSet<String>,
    /// Functions defined inside preprocessor branches, with those branches.
    pub conditional_functions: Vec<(String, Vec<(usize, u32)>)>,
}

/// Text that keeps a line out of reach of patches (never edited, never copied): CUDA's
/// synchronisation and atomics, whose misuse passes tests while breaking CUDA's rules, and
/// lines the kernel marks `// guard` (capacity checks that keep writes inside their arrays).
pub const UNTOUCHABLE: &[&str] = &["__syncwarp", "__syncthreads", "_sync(", "atomic", "// guard"];

/// The built-in types a declaration may start with; the source's own (`struct Name`,
/// `typedef ... Name;`) are found by [`source_types`].
const BUILTIN_TYPES: &[&str] =
    &["int", "u32", "u64", "u16", "u8", "bool", "unsigned", "float", "double", "uint2", "uint4", "ulonglong2"];

/// The types a declaration may start with: the built-in ones and every struct and typedef
/// the source defines (so that a line such as `Search s;` counts as a declaration, which is
/// never deleted, moved or copied).
fn source_types(source: &str) -> BTreeSet<String> {
    let mut types: BTreeSet<String> = BUILTIN_TYPES.iter().map(|t| t.to_string()).collect();
    for line in source.lines().map(str::trim) {
        let name = if let Some(rest) = line.strip_prefix("struct ") {
            rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next()
        } else if line.starts_with("typedef ") {
            line.trim_end_matches(';').split_whitespace().last()
        } else {
            None
        };
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            types.insert(name.to_string());
        }
    }
    types
}

pub fn identifiers(s: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut cur = String::new();
    for ch in s.chars().chain(std::iter::once(' ')) {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            cur.push(ch);
        } else {
            if !cur.is_empty() && !cur.chars().next().unwrap().is_ascii_digit() {
                out.insert(std::mem::take(&mut cur));
            }
            cur.clear();
        }
    }
    out
}

/// Names declared by a statement such as `u64 k = 0, l = seq_len;` or a parameter list.
fn declared_names(s: &str, types: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let s = s.trim().trim_end_matches(';').trim_end_matches('{').trim_end_matches(')');
    for part in s.split(',') {
        let part = part.split('=').next().unwrap_or("").trim();
        let words: Vec<&str> = part
            .split(|c: char| c.is_whitespace() || c == '*' || c == '&' || c == '(')
            .filter(|w| !w.is_empty())
            .collect();
        if words.len() >= 2 && words[..words.len() - 1].iter().any(|w| types.contains(*w) || *w == "const") {
            let name = words[words.len() - 1].split('[').next().unwrap_or("");
            if !name.is_empty() {
                out.insert(name.to_string());
            }
        } else if words.len() == 1 && !out.is_empty() {
            // `u64 a = 0, b = 1;`: later names of the same declaration.
            out.insert(words[0].split('[').next().unwrap_or("").to_string());
        }
    }
    out
}

/// Whether line `t` continues the statement of the code line before it (`prev`): it starts
/// with a binary operator, or the line before ends inside an expression. Such a line is
/// never edited nor copied: alone it is not a statement.
fn continues(prev: &str, t: &str) -> bool {
    let starts_with_operator =
        ["|", "&", "+", "-", "?", ":", "*", "/", "<<", ">>", ".", ",", "^"].iter().any(|op| t.starts_with(op))
            && !t.starts_with("++")
            && !t.starts_with("--");
    let open =
        [',', '(', '|', '&', '+', '=', '?', ':', '-', '*', '/', '<', '>', '^'].iter().any(|&c| prev.ends_with(c))
            && !prev.ends_with("++")
            && !prev.ends_with("--");
    starts_with_operator || open
}

/// The inside of the first balanced parentheses after `start`.
fn parenthesised(s: &str, start: usize) -> Option<(usize, usize)> {
    let open = start + s[start..].find('(')?;
    let mut depth = 0;
    for (i, ch) in s[open..].char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((open + 1, open + i));
                }
            }
            _ => {}
        }
    }
    None
}

impl Grammar {
    pub fn parse(source: &str) -> Grammar {
        let mut lines = Vec::new();
        let mut depth = 0usize;
        let mut function: Option<usize> = None;
        let mut n_functions = 0;
        let mut pending_signature = false;
        // The previous code line, to tell the continuation lines of a statement.
        let mut previous_code = String::new();
        let mut locals = BTreeSet::new();
        let mut pp: Vec<(usize, u32)> = Vec::new();
        let mut conditional_functions = Vec::new();
        let types = source_types(source);
        for (index, raw) in source.lines().enumerate() {
            let t = raw.trim();
            let line_pp = pp.clone();
            if t.starts_with("#if") {
                pp.push((index, 0));
            } else if t.starts_with("#elif") || t.starts_with("#else") {
                if let Some(top) = pp.last_mut() {
                    top.1 += 1;
                }
            } else if t.starts_with("#endif") {
                pp.pop();
            }
            let mut signature = false;
            let mut kind = LineKind::Fixed;
            let mut declares = BTreeSet::new();
            let is_signature = t.contains("__global__") || t.contains("__device__") || pending_signature;
            let untouchable = UNTOUCHABLE.iter().any(|u| t.contains(u));
            let continuation = continues(&previous_code, t);
            if !(t.starts_with('#') || t.starts_with("//") || t.is_empty()) {
                previous_code = t.split("//").next().unwrap_or("").trim().to_string();
            }
            if t.starts_with('#') || t.starts_with("//") || t.is_empty() {
            } else if function.is_some() && depth >= 1 && (untouchable || continuation) {
                // Never edited, but its declarations are in scope for the lines after it.
                if untouchable && t.ends_with(';') && !continuation {
                    declares = declared_names(t.split("//").next().unwrap_or(""), &types);
                }
            } else if is_signature && depth == 0 {
                // Parameters are declarations of the function that follows.
                signature = true;
                if !line_pp.is_empty() {
                    if let Some(name) = t.split('(').next().and_then(|h| h.split_whitespace().last()) {
                        conditional_functions.push((name.to_string(), line_pp.clone()));
                    }
                }
                declares = declared_names(t.split_once('(').map_or(t, |(_, p)| p), &types);
                pending_signature = !t.ends_with('{') && !t.ends_with(';');
                if t.ends_with('{') || t == "{" {
                    function = Some(n_functions);
                    n_functions += 1;
                }
            } else if depth == 0 && t == "{" && function.is_none() {
                function = Some(n_functions);
                n_functions += 1;
            } else if function.is_some() && depth >= 1 {
                if t.starts_with("for (") || t.starts_with("for(") {
                    if let Some((a, b)) = parenthesised(t, 0) {
                        let parts: Vec<&str> = t[a..b].splitn(3, ';').collect();
                        if parts.len() == 3 {
                            declares = declared_names(parts[0], &types);
                            kind = LineKind::For {
                                init: parts[0].trim().into(),
                                cond: parts[1].trim().into(),
                                step: parts[2].trim().into(),
                            };
                        }
                    }
                } else if t.starts_with("if (") || t.starts_with("} else if (") {
                    let at = t.find("if (").unwrap();
                    if let Some((a, b)) = parenthesised(t, at) {
                        kind = LineKind::If { cond: t[a..b].trim().into() };
                    }
                } else if t.starts_with("} else") || t.starts_with("else") {
                    // Else branches, also `else if (c) stmt;`: nothing may come between them and their if.
                    kind = LineKind::Else;
                } else if t.ends_with(';')
                    && !t.contains('{')
                    && !t.contains('}')
                    && !t.starts_with("return")
                    && !t.starts_with("case ")
                    && !t.starts_with("default")
                {
                    declares = declared_names(t, &types);
                    kind = LineKind::Statement;
                }
            }
            // A function's parameters are locals too: a line using one may only move where
            // that name is visible (`l0 = l;` of extend_exact must not land in cal_width).
            if signature || (function.is_some() && depth >= 1) {
                locals.extend(declares.iter().cloned());
            }
            let uses = identifiers(t);
            lines.push(Line { text: raw.to_string(), kind, function, depth, declares, uses, pp: line_pp, signature });
            let opens = t.matches('{').count();
            let closes = t.matches('}').count();
            depth = (depth + opens).saturating_sub(closes);
            if depth == 0 && closes > 0 {
                function = None;
            }
        }
        Grammar { lines, locals, conditional_functions }
    }

    /// Lines that evolution may edit.
    pub fn editable(&self) -> impl Iterator<Item = usize> + '_ {
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, l)| !matches!(l.kind, LineKind::Fixed | LineKind::Else))
            .map(|(i, _)| i)
    }

    /// Names visible at line `at`: the function's parameters, and locals declared earlier
    /// in a block that is still open at `at` and in preprocessor branches enclosing `at`.
    pub fn visible(&self, at: usize) -> BTreeSet<String> {
        let Some(f) = self.lines[at].function else { return BTreeSet::new() };
        let mut start = at;
        while start > 0 && (self.lines[start - 1].function == Some(f) || self.lines[start - 1].signature) {
            start -= 1;
        }
        let target_pp = &self.lines[at].pp;
        let mut names = BTreeSet::new();
        for d in start..at {
            let decl = &self.lines[d];
            if decl.declares.is_empty() || !target_pp.starts_with(&decl.pp) {
                continue;
            }
            if decl.signature {
                names.extend(decl.declares.iter().cloned());
                continue;
            }
            // A for header's variable lives inside the loop, one level deeper. A line that
            // starts by closing blocks (`} else if (c) {`) is outside them from its start.
            let block = decl.depth + matches!(decl.kind, LineKind::For { .. }) as usize;
            let depth_from_start =
                |l: &Line| l.depth.saturating_sub(l.text.trim_start().chars().take_while(|&c| c == '}').count());
            if self.lines[d + 1..=at].iter().all(|l| depth_from_start(l) >= block) {
                names.extend(decl.declares.iter().cloned());
            }
        }
        names
    }

    /// Whether the text of line `donor` can stand at line `at`: every local it uses is visible.
    pub fn fits(&self, donor: usize, at: usize) -> bool {
        let visible = self.visible(at);
        let target_pp = &self.lines[at].pp;
        let uses = &self.lines[donor].uses;
        let functions_ok = self
            .conditional_functions
            .iter()
            .filter(|(name, _)| uses.contains(name))
            .all(|(_, pp)| target_pp.starts_with(pp));
        functions_ok
            && uses
                .iter()
                .filter(|u| self.locals.contains(*u) && !self.lines[donor].declares.contains(*u))
                .all(|u| visible.contains(u))
    }
}
