//! Bounds guards: after the patches (and the loop guards), every array subscript whose bound
//! can be known is rewritten to `name[gi_clamp(index, bound)]`, so no patch can make a variant
//! read or write outside an array. `gi_clamp(i, n)` is `i` when `i < n` and `n - 1` otherwise
//! (no guard when `n` is 0, i.e. unknown); the unmodified kernel never indexes out of range, so
//! its guarded form gives the same answers.
//!
//! Where the bounds come from:
//! - local and `__shared__` arrays of fixed size, and struct member arrays, from their
//!   declarations (every dimension; macro sizes are fine: the variant is compiled with the
//!   same defines);
//! - the kernel's pointer parameters from its other arguments ([`PARAM_BOUNDS`]); a device
//!   function that takes one of them (by the same name, as the kernel passes them) gets its
//!   bound as an extra parameter `gi_n_<name>` after it, and every call passes it on;
//! - a device function's array parameter named like a kernel array (`u32 (*slots)[16]`) has
//!   that array's dimensions;
//! - a local pointer to a row of a 2-D array (`const u32 *blk = slots[t];`) has the row's
//!   length; a local pointer into a parameter with a window (`const u32 *blk = words + b * 16;`)
//!   has the window's length, and its offset is clamped so the whole window is in range.
//!
//! Pointer arithmetic `name + offset` (e.g. `__ldg(words + i)`) is guarded like a subscript,
//! also behind a cast (`(const uint4 *)blk + q`, bound scaled by the element sizes), when
//! `name` is the left operand. Not guarded: the bytes of a scalar
//! (`((const u8 *)&word)[(j % 8) / 2]`, always 0..3, in a `return` line that no patch edits),
//! and whatever `cuda/bwt.cuh` does (it is not evolved).

use std::collections::BTreeMap;

use crate::grammar::Grammar;

/// Bounds of the kernel's pointer parameters: (name, elements as a CUDA expression of the
/// kernel's arguments, window). The window is the number of elements a local pointer taken
/// as `name + offset` reads from there (an occurrence block of the BWT); None: no such pointer.
pub const PARAM_BOUNDS: &[(&str, &str, Option<&str>)] = &[
    // BWA's interleaved .bwt array as the GPU gets it (bcuda_index::Bwt::words).
    ("words", "GI_BWT_WORDS(seq_len)", Some("OCC_BLOCK_WORDS")),
    // L2[0..=4].
    ("l2", "5", None),
    // The packed reads: the host passes their length in u32 words.
    ("reads", "n_read_words", None),
    ("read_start", "n_reads", None),
    ("read_len", "n_reads", None),
    ("out_k", "n_reads", None),
    ("out_l", "n_reads", None),
];

/// Put at the top of every variant.
pub const PRELUDE: &str = "\
// Bounds guards added by bcuda-autotune after the patches (no patch can remove them):
// gi_clamp(i, n) keeps index i in [0, n); n = 0 means no bound. The unmodified kernel's
// indices are always in range, so the guards never change its answers.
__device__ __forceinline__ u64 gi_clamp(u64 i, u64 n) { return i < n || n == 0 ? i : n - 1; }
// u32 words of the interleaved BWT of n bases: one 16-word block per 128 bases (8 of them
// counts, 8 bases), the last one partial, then a block of counts only.
#define GI_BWT_WORDS(n) (((n) + 15) / 16 + (((n) + 127) / 128 + 1) * 8)
";

/// The number of u32 words of the interleaved BWT of `seq_len` bases (`GI_BWT_WORDS`).
pub fn bwt_words(seq_len: u64) -> u64 {
    seq_len.div_ceil(16) + (seq_len.div_ceil(128) + 1) * 8
}

/// One array, pointer or member: its dimensions (outermost first), and for a pointer
/// parameter the window of a local pointer taken into it.
#[derive(Clone, Debug, PartialEq)]
struct Bound {
    dims: Vec<String>,
    window: Option<String>,
}

/// What the rewriter knows in one function.
struct Ctx<'a> {
    bounds: BTreeMap<String, Bound>,
    members: &'a BTreeMap<String, Bound>,
    /// Functions whose pointer parameters carry their bound: name -> (position, parameter).
    threaded: &'a BTreeMap<String, Vec<(usize, String)>>,
}

struct Param {
    name: String,
    pointer: bool,
    /// `[16]` of `u32 (*slots)[16]`.
    dims: Vec<String>,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Index of the bracket closing the one at `open`.
fn closing(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, ch) in s[open..].char_indices() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `s` split at its top-level commas.
fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, ch) in s.char_indices() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// The consecutive `[...]` groups at the start of `s`: their contents and the length used.
fn bracket_groups(s: &str) -> (Vec<String>, usize) {
    let mut dims = Vec::new();
    let mut at = 0;
    loop {
        let skip = s[at..].len() - s[at..].trim_start().len();
        if !s[at + skip..].starts_with('[') {
            return (dims, at);
        }
        let Some(close) = closing(s, at + skip) else { return (dims, at) };
        dims.push(s[at + skip + 1..close].trim().to_string());
        at = close + 1;
    }
}

/// The leading identifier of `s` and the rest.
fn leading_ident(s: &str) -> Option<(&str, &str)> {
    let end = s.bytes().position(|b| !is_ident(b)).unwrap_or(s.len());
    (end > 0 && !s.as_bytes()[0].is_ascii_digit()).then(|| (&s[..end], &s[end..]))
}

fn strip_qualifiers(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        match ["__shared__ ", "static ", "const ", "volatile "].iter().find_map(|q| s.strip_prefix(q)) {
            Some(rest) => s = rest,
            None => return s,
        }
    }
}

/// `[__shared__] [const] T name[D1][D2]...;` (one declarator): the name, the dimensions and
/// the length of the text up to the end of the dimensions.
fn array_decl(text: &str) -> Option<(String, Vec<String>, usize)> {
    let s = strip_qualifiers(text);
    let (ty, rest) = leading_ident(s)?;
    if matches!(ty, "return" | "case" | "goto" | "else" | "do") {
        return None;
    }
    let rest_trim = rest.trim_start();
    if rest_trim.len() == rest.len() {
        return None;
    }
    let (name, rest) = leading_ident(rest_trim)?;
    let (dims, used) = bracket_groups(rest);
    let after = rest[used..].trim_start();
    if dims.is_empty() || !(after.starts_with(';') || after.starts_with('=')) {
        return None;
    }
    let end = text.len() - rest.len() + used;
    Some((name.to_string(), dims, end))
}

/// `[const] T *name = rhs;`: the name and the right-hand side.
fn pointer_decl(text: &str) -> Option<(String, String)> {
    let s = strip_qualifiers(text);
    let (_ty, rest) = leading_ident(s)?;
    let rest = rest.trim_start().strip_prefix('*')?.trim_start();
    let rest = rest.strip_prefix("__restrict__").unwrap_or(rest).trim_start();
    let (name, rest) = leading_ident(rest)?;
    let rhs = rest.trim_start().strip_prefix('=')?.trim().strip_suffix(';')?;
    Some((name.to_string(), rhs.trim().to_string()))
}

/// The parameters of a function from its signature text.
fn parameters(signature: &str) -> (String, Vec<Param>) {
    let mut sig = signature.to_string();
    if let Some(at) = sig.find("__launch_bounds__") {
        if let Some(close) = sig[at..].find('(').and_then(|o| closing(&sig, at + o)) {
            sig.replace_range(at..=close, "");
        }
    }
    let Some(open) = sig.find('(') else { return (String::new(), Vec::new()) };
    let name = sig[..open]
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .rfind(|w| !w.is_empty())
        .unwrap_or("")
        .to_string();
    let Some(close) = closing(&sig, open) else { return (name, Vec::new()) };
    let params = split_top(&sig[open + 1..close])
        .into_iter()
        .filter_map(|p| {
            let p = p.trim();
            if let Some(at) = p.find("(*") {
                // `u32 (*slots)[16]`: a pointer to rows.
                let close = closing(p, at)?;
                let name = p[at + 2..close].trim().to_string();
                return Some(Param { name, pointer: true, dims: bracket_groups(&p[close + 1..]).0 });
            }
            let head = p.split('[').next().unwrap_or(p);
            let name =
                head.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).rfind(|w| !w.is_empty())?.to_string();
            Some(Param { name, pointer: head.contains('*') || p.contains('['), dims: Vec::new() })
        })
        .collect();
    (name, params)
}

/// `name + ` where `name` is the left operand of a pointer addition: the text before it ends
/// with nothing that binds tighter than `+`.
fn left_operand(before: &str) -> bool {
    let t = before.trim_end();
    t.is_empty()
        || t.ends_with(['(', ',', '=', '?', ':', '{', ';', '<', '>', '|'])
        || t.ends_with("return")
        || cast_before(before).is_some()
}

/// The type of a pointer cast `(T *)` right before, if any.
fn cast_before(before: &str) -> Option<String> {
    let t = before.trim_end();
    let inner = t.strip_suffix(')')?.trim_end().strip_suffix('*')?;
    let open = inner.rfind('(')?;
    let ty = inner[open + 1..].trim();
    (!ty.is_empty() && ty.split_whitespace().all(|w| w.bytes().all(is_ident))).then(|| ty.to_string())
}

/// End of the offset of a pointer addition that starts at `from`: the first top-level
/// operator that binds less tightly than `+`, or a closing bracket.
fn offset_end(s: &str, from: usize) -> usize {
    let b = s.as_bytes();
    let mut depth = 0i32;
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' if depth == 0 => return i,
            b')' | b']' => depth -= 1,
            b'-' if b.get(i + 1) == Some(&b'>') => i += 1,
            b',' | b';' | b'?' | b':' | b'=' | b'<' | b'>' | b'!' | b'&' | b'|' | b'^' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

impl Ctx<'_> {
    /// `s` with its subscripts and pointer additions guarded and bounds passed to calls.
    /// `window`: the pointer whose addition starts a window (a local pointer declaration).
    fn rewrite(&self, s: &str, window: Option<&str>) -> String {
        let b = s.as_bytes();
        let mut out = String::new();
        let mut i = 0;
        while i < b.len() {
            let starts_name = is_ident(b[i]) && !b[i].is_ascii_digit() && (i == 0 || !is_ident(b[i - 1]));
            if !starts_name {
                let ch = s[i..].chars().next().unwrap();
                out.push(ch);
                i += ch.len_utf8();
                continue;
            }
            let end = i + s[i..].bytes().position(|c| !is_ident(c)).unwrap_or(s.len() - i);
            let name = &s[i..end];
            let before = out.trim_end();
            let member = before.ends_with('.') || before.ends_with("->");
            let next = end + (s[end..].len() - s[end..].trim_start().len());
            let bound = if member { self.members.get(name) } else { self.bounds.get(name) };
            if let (Some(bound), true) = (bound, s[next..].starts_with('[')) {
                // name[i][j]: every dimension that is known.
                out.push_str(name);
                let mut at = end;
                for d in &bound.dims {
                    let open = at + (s[at..].len() - s[at..].trim_start().len());
                    if !s[open..].starts_with('[') {
                        break;
                    }
                    let Some(close) = closing(s, open) else { break };
                    out.push_str(&format!("[gi_clamp({}, {d})]", self.rewrite(s[open + 1..close].trim(), None)));
                    at = close + 1;
                }
                i = at;
                continue;
            }
            if let (Some(extra), false, true) = (self.threaded.get(name), member, s[next..].starts_with('(')) {
                if let Some(close) = closing(s, next) {
                    let mut args: Vec<String> =
                        split_top(&s[next + 1..close]).iter().map(|a| self.rewrite(a.trim(), None)).collect();
                    for (pos, _) in extra.iter().rev() {
                        if *pos < args.len() {
                            // The caller's bound of the pointer it passes (0: none known).
                            let passed = args[*pos].trim().to_string();
                            let n = self
                                .bounds
                                .get(&passed)
                                .filter(|b| b.dims.len() == 1)
                                .map_or("0".to_string(), |b| b.dims[0].clone());
                            args.insert(pos + 1, n);
                        }
                    }
                    out.push_str(&format!("{name}({})", args.join(", ")));
                    i = close + 1;
                    continue;
                }
            }
            let plus = s[next..].starts_with('+') && !s[next..].starts_with("++") && !s[next..].starts_with("+=");
            if let (Some(bound), false, true) = (bound, member, plus) {
                if bound.dims.len() == 1 && left_operand(&out) {
                    let from = next + 1;
                    let to = offset_end(s, from);
                    let offset = s[from..to].trim();
                    let n = &bound.dims[0];
                    let limit = match (window == Some(name), &bound.window, cast_before(&out)) {
                        (true, Some(w), _) => format!("{n} - {w} + 1"),
                        (_, _, Some(ty)) => format!("{n} * sizeof(*{name}) / sizeof({ty})"),
                        _ => n.clone(),
                    };
                    out.push_str(&format!("{name} + gi_clamp({}, {limit})", self.rewrite(offset, None)));
                    if to < s.len() && !s[to..].starts_with([')', ']', ',', ';']) {
                        out.push(' ');
                    }
                    i = to;
                    continue;
                }
            }
            out.push_str(name);
            i = end;
        }
        out
    }
}

/// A function of the source: its name, parameters and body lines.
struct Function {
    name: String,
    params: Vec<Param>,
    kernel: bool,
    body: Vec<usize>,
    signature: Vec<usize>,
}

fn functions(g: &Grammar) -> Vec<Function> {
    let mut out: Vec<Function> = Vec::new();
    let mut index: BTreeMap<usize, usize> = BTreeMap::new();
    let mut pending: Vec<usize> = Vec::new();
    for (i, line) in g.lines.iter().enumerate() {
        if line.signature {
            pending.push(i);
        }
        let Some(f) = line.function else { continue };
        let at = *index.entry(f).or_insert_with(|| {
            let text: Vec<&str> = pending.iter().map(|&l| g.lines[l].text.as_str()).collect();
            let text = text.join("\n");
            let (name, params) = parameters(&text);
            out.push(Function {
                name,
                params,
                kernel: text.contains("__global__"),
                body: Vec::new(),
                signature: std::mem::take(&mut pending),
            });
            out.len() - 1
        });
        if !line.signature {
            out[at].body.push(i);
        }
    }
    out
}

/// Code part of a line (a trailing `//` comment is left as it is).
fn code_and_comment(text: &str) -> (&str, &str) {
    match text.find("//") {
        Some(at) => (&text[..at], &text[at..]),
        None => (text, ""),
    }
}

fn is_code(text: &str) -> bool {
    let t = text.trim_start();
    !(t.is_empty() || t.starts_with('#') || t.starts_with("//"))
}

/// `source` (a patched kernel) with every array access whose bound is known guarded, and the
/// [`PRELUDE`] at the top.
pub fn guard(source: &str) -> String {
    let g = Grammar::parse(source);
    let fns = functions(&g);
    let decls = |lines: &[usize]| -> BTreeMap<String, Option<Vec<String>>> {
        let mut m: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
        for &l in lines {
            if let Some((name, dims, _)) = array_decl(&g.lines[l].text) {
                // Two arrays of one name and different sizes: neither is guarded.
                let e = m.entry(name).or_insert_with(|| Some(dims.clone()));
                if e.as_ref() != Some(&dims) {
                    *e = None;
                }
            }
        }
        m
    };
    let bound = |dims: Vec<String>| Bound { dims, window: None };
    // Struct members: declarations outside functions.
    let outside: Vec<usize> = (0..g.lines.len())
        .filter(|&i| g.lines[i].function.is_none() && g.lines[i].depth > 0 && !g.lines[i].signature)
        .collect();
    let members: BTreeMap<String, Bound> =
        decls(&outside).into_iter().filter_map(|(n, d)| Some((n, bound(d?)))).collect();
    let kernel_arrays: BTreeMap<String, Vec<String>> =
        fns.iter().filter(|f| f.kernel).flat_map(|f| decls(&f.body)).filter_map(|(n, d)| Some((n, d?))).collect();
    let param_bound = |name: &str| PARAM_BOUNDS.iter().find(|(n, _, _)| *n == name);
    let mut threaded: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    for f in fns.iter().filter(|f| !f.kernel) {
        let t: Vec<(usize, String)> = f
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.pointer && p.dims.is_empty() && param_bound(&p.name).is_some())
            .map(|(i, p)| (i, p.name.clone()))
            .collect();
        if !t.is_empty() {
            threaded.insert(f.name.clone(), t);
        }
    }
    let mut lines: Vec<String> = g.lines.iter().map(|l| l.text.clone()).collect();
    for f in &fns {
        let mut bounds: BTreeMap<String, Bound> = BTreeMap::new();
        // A kernel's bound is an expression of its own arguments (and macros): a kernel
        // without them (inexact_search has no n_reads) leaves that pointer unguarded.
        let known = |expr: &str| {
            !f.kernel
                || crate::grammar::identifiers(expr).iter().all(|id| {
                    id.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
                        || f.params.iter().any(|p| p.name == *id)
                })
        };
        for p in &f.params {
            if let (Some((_, n, w)), true) =
                (param_bound(&p.name).filter(|(_, n, _)| known(n)), p.pointer && p.dims.is_empty())
            {
                let n = if f.kernel { n.to_string() } else { format!("gi_n_{}", p.name) };
                bounds.insert(p.name.clone(), Bound { dims: vec![n], window: w.map(str::to_string) });
            } else if let (Some(dims), false) = (kernel_arrays.get(&p.name), f.kernel) {
                // `u32 (*slots)[16]` receiving the kernel's `slots[BLOCK_W][16]`.
                if p.pointer && dims.len() == p.dims.len() + 1 && dims[1..] == p.dims[..] {
                    bounds.insert(p.name.clone(), bound(dims.clone()));
                }
            }
        }
        for (name, dims) in decls(&f.body) {
            match dims {
                Some(d) => bounds.insert(name, bound(d)),
                None => bounds.remove(&name),
            };
        }
        // Local pointers into a bounded array or parameter.
        let mut windows: BTreeMap<usize, String> = BTreeMap::new();
        for &l in &f.body {
            let Some((name, rhs)) = pointer_decl(&g.lines[l].text) else { continue };
            let Some((base, rest)) = leading_ident(&rhs) else { continue };
            let Some(b) = bounds.get(base).cloned() else { continue };
            let rest = rest.trim_start();
            let (groups, used) = bracket_groups(rest);
            if groups.len() == 1 && used == rest.len() && b.dims.len() == 2 {
                bounds.insert(name, bound(b.dims[1..].to_vec()));
            } else if let (true, Some(w)) = (rest.starts_with('+') && b.dims.len() == 1, b.window) {
                bounds.insert(name, bound(vec![w]));
                windows.insert(l, base.to_string());
            }
        }
        let ctx = Ctx { bounds, members: &members, threaded: &threaded };
        for &l in &f.body {
            if !is_code(&lines[l]) {
                continue;
            }
            let (code, comment) = code_and_comment(&g.lines[l].text);
            // The dimensions of a declaration stay as they are.
            let keep = array_decl(code).map_or(0, |(_, _, end)| end);
            lines[l] = format!(
                "{}{}{}",
                &code[..keep],
                ctx.rewrite(&code[keep..], windows.get(&l).map(String::as_str)),
                comment
            );
        }
        if !f.kernel {
            // The bounds of pointer parameters become parameters after them.
            for &l in &f.signature {
                for (_, p) in threaded.get(&f.name).into_iter().flatten() {
                    lines[l] = add_bound_parameter(&lines[l], p);
                }
            }
        }
    }
    let mut out = String::from(PRELUDE);
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// `... *name, ...` -> `... *name, u64 gi_n_name, ...` in a signature line.
fn add_bound_parameter(line: &str, name: &str) -> String {
    let b = line.as_bytes();
    let mut from = 0;
    while let Some(at) = line[from..].find(name).map(|a| a + from) {
        let end = at + name.len();
        let whole = (at == 0 || !is_ident(b[at - 1])) && (end == b.len() || !is_ident(b[end]));
        let before = line[..at].trim_end();
        let before = before.strip_suffix("__restrict__").unwrap_or(before).trim_end();
        let after = line[end..].trim_start();
        if whole && before.ends_with('*') && (after.starts_with(',') || after.starts_with(')') || after.is_empty()) {
            let sep = if after.is_empty() { "," } else { "" };
            return format!("{}, u64 gi_n_{name}{sep}{}", &line[..end], &line[end..]);
        }
        from = end;
    }
    line.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_and_parameters_parse() {
        assert_eq!(
            array_decl("    __shared__ u32 slots[BLOCK_W][16];"),
            Some(("slots".into(), vec!["BLOCK_W".into(), "16".into()], 37))
        );
        assert_eq!(array_decl("    u32 w[16];").map(|d| d.1), Some(vec!["16".into()]));
        assert_eq!(array_decl("    u32 word = local[j >> 3];"), None);
        assert_eq!(array_decl("    return words[i];"), None);
        assert_eq!(
            pointer_decl("    const u32 *blk = slots[threadIdx.x];"),
            Some(("blk".into(), "slots[threadIdx.x]".into()))
        );
        let (name, params) =
            parameters("__device__ void f(const u32 *__restrict__ words, u64 k, u32 (*slots)[16], int c)");
        assert_eq!(name, "f");
        let summary: Vec<(String, bool, usize)> =
            params.iter().map(|p| (p.name.clone(), p.pointer, p.dims.len())).collect();
        assert_eq!(
            summary,
            [("words".into(), true, 0), ("k".into(), false, 0), ("slots".into(), true, 1), ("c".into(), false, 0)]
        );
        assert_eq!(parameters("extern \"C\" __global__ void __launch_bounds__(BLOCK_W, 2) k(u32 n)").0, "k");
    }

    #[test]
    fn pointer_additions_are_guarded_only_as_left_operands() {
        let members = BTreeMap::new();
        let threaded = BTreeMap::new();
        let mut bounds = BTreeMap::new();
        bounds.insert("p".to_string(), Bound { dims: vec!["n".into()], window: Some("16".into()) });
        let ctx = Ctx { bounds, members: &members, threaded: &threaded };
        assert_eq!(ctx.rewrite("__ldg(p + i * 2)", None), "__ldg(p + gi_clamp(i * 2, n))");
        assert_eq!(
            ctx.rewrite("x = (const uint4 *)p + q;", None),
            "x = (const uint4 *)p + gi_clamp(q, n * sizeof(*p) / sizeof(const uint4));"
        );
        assert_eq!(
            ctx.rewrite("const u32 *b = p + k * 16;", Some("p")),
            "const u32 *b = p + gi_clamp(k * 16, n - 16 + 1);"
        );
        assert_eq!(ctx.rewrite("y = 2 * p + 1;", None), "y = 2 * p + 1;");
        assert_eq!(ctx.rewrite("y = p + a < b;", None), "y = p + gi_clamp(a, n) < b;");
        assert_eq!(ctx.rewrite("y = p[p[i]] + 1;", None), "y = p[gi_clamp(p[gi_clamp(i, n)], n)] + 1;");
    }

    #[test]
    fn bwt_words_match_the_layout() {
        // seq_len 200: blocks of 8 counts + 8 base words, the second with 5 base words, then 8 counts.
        assert_eq!(bwt_words(200), 8 + 8 + 8 + 5 + 8);
        assert_eq!(bwt_words(256), 3 * 8 + 16);
    }
}
