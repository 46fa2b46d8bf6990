//! A small C preprocessor for the phenotype tabu: keeps the lines that the switches select
//! (`#if NAME`, `#if !NAME`, `#ifdef`, `#ifndef`, `#elif NAME`, `#else`, `#endif`), so two
//! genomes that compile to the same source are recognised before NVRTC runs.

use std::collections::HashMap;

fn eval(expr: &str, defines: &HashMap<String, u32>) -> bool {
    let expr = expr.trim();
    if let Some(name) = expr.strip_prefix('!') {
        return !eval(name, defines);
    }
    match expr.parse::<u32>() {
        Ok(v) => v != 0,
        Err(_) => defines.get(expr).copied().unwrap_or(0) != 0,
    }
}

/// Per line of `source`: whether the compiler sees it under these defines (directives are
/// never seen).
pub fn active_lines<'a>(source: impl Iterator<Item = &'a str>, defines: &[(String, u32)]) -> Vec<bool> {
    let defines: HashMap<String, u32> = defines.iter().cloned().collect();
    // Per nesting level: (this branch active, some branch already taken).
    let mut stack: Vec<(bool, bool)> = Vec::new();
    let active = |stack: &Vec<(bool, bool)>| stack.iter().all(|&(on, _)| on);
    let mut out = Vec::new();
    for line in source {
        let t = line.trim_start();
        let mut seen = false;
        if let Some(rest) = t.strip_prefix("#ifdef ") {
            let on = defines.contains_key(rest.trim());
            stack.push((on, on));
        } else if let Some(rest) = t.strip_prefix("#ifndef ") {
            let on = !defines.contains_key(rest.trim());
            stack.push((on, on));
        } else if let Some(rest) = t.strip_prefix("#if ") {
            let on = eval(rest, &defines);
            stack.push((on, on));
        } else if let Some(rest) = t.strip_prefix("#elif ") {
            if let Some(top) = stack.last_mut() {
                let on = !top.1 && eval(rest, &defines);
                *top = (on, top.1 || on);
            }
        } else if t.starts_with("#else") {
            if let Some(top) = stack.last_mut() {
                *top = (!top.1, true);
            }
        } else if t.starts_with("#endif") {
            stack.pop();
        } else {
            seen = active(&stack);
        }
        out.push(seen);
    }
    out
}

/// The source as the compiler sees it for these defines (directives removed).
pub fn preprocess(source: &str, defines: &[(String, u32)]) -> String {
    let mut out = String::new();
    for (line, on) in source.lines().zip(active_lines(source.lines(), defines)) {
        if on {
            out.push_str(line.trim());
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_selected_branches() {
        let src = "a\n#if X\nb\n#elif Y\nc\n#else\nd\n#endif\n#ifdef Z\ne\n#endif\nf\n";
        assert_eq!(preprocess(src, &[("X".into(), 1)]), "a\nb\nf\n");
        assert_eq!(preprocess(src, &[("X".into(), 0), ("Y".into(), 1)]), "a\nc\nf\n");
        assert_eq!(preprocess(src, &[("Z".into(), 4)]), "a\nd\ne\nf\n");
    }
}
