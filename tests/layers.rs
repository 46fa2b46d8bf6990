//! The crate's layers point one way (docs/layout.md): commands, then the pipeline, then the
//! search and the GPU driver, then bwa's formats and option arithmetic. Every `crate::` path in
//! `src/` (comments aside) names a module of the file's own layer or one below it; the small
//! helpers are used from anywhere and use only the two lowest layers.

use std::path::{Path, PathBuf};

/// The layer of a module path (`aln/stages`, `gpu/queue`, `sai`): 1 commands, 2 pipeline,
/// 3 search and GPU driver, 4 formats and options, 0 helpers.
fn layer(module: &str) -> u8 {
    let top = module.split('/').next().unwrap();
    match (top, module) {
        (_, "aln") | (_, "aln/mod") => 1,
        ("aln", _) | ("sam", _) | ("progress", _) | ("summary", _) => 2,
        ("search", _) | ("gpu", _) => 3,
        ("sai", _) | ("reads", _) | ("input", _) | ("aln_options", _) => 4,
        ("test_hooks", _) | ("threads", _) | ("option_values", _) | ("default_index", _) => 0,
        _ => 1, // cli, main, lib and one module per command
    }
}

/// A module of `crate::name::sub` as `layer` sees it: `aln::align` is the command's, any other
/// item of `aln` (`aln::stages`) its pipeline's.
fn referred_module(path: &str) -> String {
    let mut parts = path.split("::");
    let top = parts.next().unwrap_or_default();
    match (top, parts.next()) {
        ("aln", Some(sub)) if ["complete", "dealer", "gpus", "report", "stages", "timeline"].contains(&sub) => {
            format!("aln/{sub}")
        }
        _ => top.to_string(),
    }
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::a::b` path in the code of `text` (not in comments).
fn crate_paths(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
            paths.push(rest[..end].trim_end_matches(':').to_string());
        }
    }
    paths
}

fn violations() -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap().with_extension("");
        let module = rel.to_string_lossy().trim_end_matches("/mod").to_string();
        let from = layer(&module);
        for path in crate_paths(&std::fs::read_to_string(&file).unwrap()) {
            if path.is_empty() {
                found.push(format!(
                    "src/{}.rs: a grouped `crate::{{...}}` path, which this check does not read",
                    rel.display()
                ));
                continue;
            }
            let to = layer(&referred_module(&path));
            let allowed = match (from, to) {
                (0, to) => to == 0 || to >= 3,
                (_, 0) => true,
                (from, to) => to >= from,
            };
            if !allowed {
                found.push(format!("src/{}.rs (layer {from}) uses crate::{path} (layer {to})", rel.display()));
            }
        }
    }
    found
}

#[test]
fn the_layers_point_one_way() {
    let found = violations();
    assert!(found.is_empty(), "arrows that point up:\n{}", found.join("\n"));
}

#[test]
fn the_check_sees_an_arrow_up() {
    assert_eq!(layer("gpu/queue"), 3);
    assert_eq!(layer(&referred_module("aln::stages::write_in_order")), 2);
    assert_eq!(layer(&referred_module("aln::align")), 1);
    assert_eq!(
        crate_paths("use crate::sam::record;\n// crate::aln::run\nlet x = crate::aln::align(y);"),
        ["sam::record", "aln::align"]
    );
}
