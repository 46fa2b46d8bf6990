//! Edits of a kernel source, and their application. Line numbers refer to the unedited
//! source (the grammar), so patches compose in any order.

use serde::{Deserialize, Serialize};

use crate::grammar::{identifiers, Grammar, LineKind};

/// Iterations after which any loop of a variant stops: twice the longest loop the kernels
/// run by design (reads of up to 4096 bases). Added by `apply`, so no patch can remove it;
/// `for (;;)` loops, endless by design, keep none.
pub const LOOP_GUARD: u32 = 8192;

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ForPart {
    Init,
    Cond,
    Step,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Patch {
    /// Delete a statement.
    Delete { line: usize },
    /// Replace a statement with another statement.
    Replace { line: usize, with: usize },
    /// Insert a copy of a statement before a line.
    Insert { before: usize, from: usize },
    /// Replace an if's condition with another if's.
    IfCond { line: usize, from: usize },
    /// Replace one part of a for header with the same part of another.
    ForPart { line: usize, from: usize, part: ForPart },
    /// `#pragma unroll` before a loop: 0 = bare, 1..=11 = that count.
    Unroll { line: usize, count: u8 },
    /// `__restrict__` on all pointer parameters (true) or none (false).
    Restrict(bool),
    /// `__launch_bounds__(BLOCK_W, min_blocks)` (INEXACT_BLOCK_W in the inexact kernels; 0 =
    /// the source's own).
    LaunchBounds(u8),
}

impl Patch {
    /// Whether the patch is well typed for this grammar (types and scopes).
    pub fn valid(&self, g: &Grammar) -> bool {
        let kind = |i: usize| g.lines.get(i).map(|l| &l.kind);
        // Declarations stay (later lines need them); break/continue only where they stand.
        let plain = |i: usize| {
            matches!(kind(i), Some(LineKind::Statement))
                && g.lines[i].declares.is_empty()
                && !matches!(g.lines[i].text.trim(), "break;" | "continue;")
        };
        match *self {
            Patch::Delete { line } => plain(line),
            Patch::Replace { line, with } => line != with && plain(line) && plain(with) && g.fits(with, line),
            Patch::Insert { before, from } => {
                matches!(kind(before), Some(LineKind::Statement | LineKind::If { .. } | LineKind::For { .. }))
                    && !g.lines[before].text.trim_start().starts_with('}')
                    && plain(from)
                    && g.fits(from, before)
            }
            Patch::IfCond { line, from } => {
                line != from
                    && matches!(kind(line), Some(LineKind::If { .. }))
                    && matches!(kind(from), Some(LineKind::If { .. }))
                    && g.fits(from, line)
            }
            Patch::ForPart { line, from, ref part } => {
                let (Some((_, _, _)), Some((fi, fc, fs))) =
                    (for_parts(&g.lines[line].kind), for_parts(&g.lines[from].kind))
                else {
                    return false;
                };
                // The new part may use the target loop's own variable and what is visible there.
                let mut visible = g.visible(line);
                visible.extend(g.lines[line].declares.iter().cloned());
                let text = match part {
                    ForPart::Init => fi,
                    ForPart::Cond => fc,
                    ForPart::Step => fs,
                };
                let own = if *part == ForPart::Init { &g.lines[from].declares } else { &visible };
                line != from
                    // A loop keeps its own variable: inits swap only between loops over the same name.
                    && (*part != ForPart::Init || g.lines[line].declares == g.lines[from].declares)
                    && g.lines[from].pp.iter().zip(&g.lines[line].pp).all(|(a, b)| a == b)
                    && identifiers(text).iter().filter(|u| g.locals.contains(*u)).all(|u| visible.contains(u) || own.contains(u))
            }
            Patch::Unroll { line, count } => count <= 11 && matches!(kind(line), Some(LineKind::For { .. })),
            Patch::Restrict(_) | Patch::LaunchBounds(_) => true,
        }
    }
}

impl Patch {
    /// The patch in words, quoting the lines it touches (line numbers count from 1), for
    /// reports and logs.
    pub fn describe(&self, g: &Grammar) -> String {
        let at = |i: usize| {
            g.lines.get(i).map_or(format!("line {}", i + 1), |l| format!("line {} `{}`", i + 1, l.text.trim()))
        };
        match self {
            Patch::Delete { line } => format!("delete {}", at(*line)),
            Patch::Replace { line, with } => format!("replace {} with {}", at(*line), at(*with)),
            Patch::Insert { before, from } => format!("insert {} before {}", at(*from), at(*before)),
            Patch::IfCond { line, from } => format!("condition of {} from {}", at(*line), at(*from)),
            Patch::ForPart { line, from, part } => format!("{part:?} of the loop at {} from {}", at(*line), at(*from)),
            Patch::Unroll { line, count: 0 } => format!("#pragma unroll before {}", at(*line)),
            Patch::Unroll { line, count } => format!("#pragma unroll {count} before {}", at(*line)),
            Patch::Restrict(on) => format!("__restrict__ {} on all pointer parameters", if *on { "on" } else { "off" }),
            Patch::LaunchBounds(0) => "__launch_bounds__ as in the source".to_string(),
            Patch::LaunchBounds(n) => format!("__launch_bounds__(BLOCK_W, {n})"),
        }
    }
}

fn for_parts(kind: &LineKind) -> Option<(&str, &str, &str)> {
    match kind {
        LineKind::For { init, cond, step } => Some((init, cond, step)),
        _ => None,
    }
}

fn indent(text: &str) -> &str {
    &text[..text.len() - text.trim_start().len()]
}

/// The source with `patches` applied. Every for loop gets an iteration guard, and then every
/// array access whose bound is known a bounds guard ([`crate::bounds::guard`]).
pub fn apply(g: &Grammar, patches: &[Patch]) -> String {
    let mut text: Vec<Option<String>> = g.lines.iter().map(|l| Some(l.text.clone())).collect();
    let mut before: Vec<Vec<String>> = vec![Vec::new(); g.lines.len()];
    let mut restrict: Option<bool> = None;
    let mut bounds: Option<u8> = None;
    let mut for_override: Vec<Option<(String, String, String)>> =
        g.lines.iter().map(|l| for_parts(&l.kind).map(|(a, b, c)| (a.into(), b.into(), c.into()))).collect();
    for p in patches.iter().filter(|p| p.valid(g)) {
        match p {
            Patch::Delete { line } => text[*line] = None,
            Patch::Replace { line, with } => {
                text[*line] = Some(format!("{}{}", indent(&g.lines[*line].text), g.lines[*with].text.trim()))
            }
            Patch::Insert { before: b, from } => {
                before[*b].push(format!("{}{}", indent(&g.lines[*b].text), g.lines[*from].text.trim()))
            }
            Patch::IfCond { line, from } => {
                if let (LineKind::If { cond }, LineKind::If { cond: new }) =
                    (&g.lines[*line].kind, &g.lines[*from].kind)
                {
                    if let Some(t) = text[*line].as_mut() {
                        *t = t.replacen(&format!("({cond})"), &format!("({new})"), 1);
                    }
                }
            }
            Patch::ForPart { line, from, part } => {
                let (fi, fc, fs) = for_parts(&g.lines[*from].kind).unwrap();
                if let Some((i, c, s)) = for_override[*line].as_mut() {
                    match part {
                        ForPart::Init => *i = fi.into(),
                        ForPart::Cond => *c = fc.into(),
                        ForPart::Step => *s = fs.into(),
                    }
                }
            }
            Patch::Unroll { line, count } => {
                let pragma = if *count == 0 { "#pragma unroll".to_string() } else { format!("#pragma unroll {count}") };
                before[*line].push(format!("{}{}", indent(&g.lines[*line].text), pragma));
            }
            Patch::Restrict(on) => restrict = Some(*on),
            Patch::LaunchBounds(b) => bounds = Some(*b),
        }
    }
    let mut out = String::new();
    let mut guard = 0;
    let mut in_signature = false;
    for (i, line) in g.lines.iter().enumerate() {
        // A `for (;;)` (pass 1's pop loop, the replay's) runs longer than the guard by design
        // and keeps none.
        let is_loop = text[i].is_some() && for_parts(&line.kind).is_some_and(|(_, cond, _)| !cond.trim().is_empty());
        if is_loop {
            // The guard counts iterations in a variable declared before the loop (and before
            // any #pragma, which must stand right before the loop).
            out.push_str(&format!("{}unsigned int gi_guard{guard} = 0;\n", indent(&line.text)));
        }
        for extra in &before[i] {
            out.push_str(extra);
            out.push('\n');
        }
        let Some(mut t) = text[i].clone() else { continue };
        if let (Some((init, cond, step)), Some(orig), true) = (&for_override[i], for_parts(&line.kind), is_loop) {
            let header = format!("for ({}; {}; {})", orig.0, orig.1, orig.2);
            // An empty condition (copied from a `for (;;)`) runs until the guard stops it.
            let cond = if cond.trim().is_empty() { "true" } else { cond.as_str() };
            let guarded = format!("for ({init}; ({cond}) && gi_guard{guard}++ < {LOOP_GUARD}u; {step})");
            t = t.replacen(&header, &guarded, 1);
            guard += 1;
        }
        in_signature |= line.text.contains("__global__");
        if in_signature {
            if let Some(on) = restrict {
                t = if on { add_restrict(&t) } else { t.replace("__restrict__ ", "") };
            }
            if let Some(b) = bounds {
                if b > 0 {
                    for w in ["BLOCK_W", "INEXACT_BLOCK_W"] {
                        t = t.replacen(&format!("__launch_bounds__({w})"), &format!("__launch_bounds__({w}, {b})"), 1);
                    }
                }
            }
            let end = line.text.trim_end();
            in_signature = !(end.ends_with(')') || end.ends_with('{'));
        }
        out.push_str(&t);
        out.push('\n');
    }
    crate::bounds::guard(&out)
}

/// `T *name` -> `T *__restrict__ name` for every pointer parameter on the line.
fn add_restrict(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(star) = rest.find('*') {
        out.push_str(&rest[..=star]);
        rest = &rest[star + 1..];
        if !rest.starts_with("__restrict__") && rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            out.push_str("__restrict__ ");
        }
    }
    out.push_str(rest);
    out
}
