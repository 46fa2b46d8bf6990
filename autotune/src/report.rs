//! The run's report: a text summary and an SVG plot of the best and median GPU time of the
//! correct variants per generation (relative to the reference on each generation's reads,
//! scaled by the first reference time).

use std::fmt::Write as _;

use crate::evolution::{GenerationTimes, History};

pub fn text(history: &History, winner: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "reference kernel: {:.4} ms", history.reference_ms);
    let _ = writeln!(
        s,
        "variants evaluated: {}, tabu hits: {} ({:.1}% of the genomes drawn; {} of them same sources), mutations redrawn before a seen genome: {}",
        history.evaluated,
        history.tabu_hits,
        100.0 * history.tabu_rate(),
        history.phenotype_hits,
        history.redraws
    );
    let o = &history.outcomes;
    let _ = writeln!(
        s,
        "outcomes: {} ran with the reference's answers, {} with other exact_match intervals, {} with other hits, {} compile errors, {} illegal switch sets, {} faults or timeouts (each restarts the worker)",
        o.ran, o.penalised, o.wrong_hits, o.compile_errors, o.illegal, o.faults
    );
    let _ = writeln!(s, "generation\tbest ms\tmedian ms");
    for (g, (best, median)) in history.generations.iter().enumerate() {
        let f = |v: &Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.4}"));
        let _ = writeln!(s, "{g}\t{}\t{}", f(best), f(median));
    }
    let _ = writeln!(s, "winner: {winner}");
    s
}

pub fn svg(history: &History) -> String {
    let (w, h, pad) = (640.0, 360.0, 50.0);
    let points: Vec<f64> = history
        .generations
        .iter()
        .flat_map(|(b, m)| [*b, *m])
        .flatten()
        .chain([history.reference_ms])
        .filter(|v| v.is_finite())
        .collect();
    let (lo, hi) = points.iter().fold((f64::INFINITY, 0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let (lo, hi) = if lo < hi { (lo * 0.95, hi * 1.05) } else { (lo * 0.5, lo * 1.5 + 1e-9) };
    let n = history.generations.len().max(2) - 1;
    let x = |g: usize| pad + (w - 2.0 * pad) * g as f64 / n as f64;
    let y = |v: f64| h - pad - (h - 2.0 * pad) * (v - lo) / (hi - lo);
    let line = |pick: &dyn Fn(&GenerationTimes) -> Option<f64>| {
        history
            .generations
            .iter()
            .enumerate()
            .filter_map(|(g, p)| pick(p).map(|v| format!("{:.1},{:.1}", x(g), y(v))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    s += &format!(
        r#"<rect width="{w}" height="{h}" fill="white"/><text x="{pad}" y="20">kernel time (ms) per generation</text>"#
    );
    s += &format!(
        r#"<line x1="{pad}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="gray" stroke-dasharray="4"/><text x="{1}" y="{0:.1}" text-anchor="end">reference</text>"#,
        y(history.reference_ms),
        w - pad
    );
    s += &format!(r#"<polyline fill="none" stroke="steelblue" stroke-width="2" points="{}"/>"#, line(&|p| p.0));
    s += &format!(r#"<polyline fill="none" stroke="orange" stroke-width="2" points="{}"/>"#, line(&|p| p.1));
    s += &format!(r#"<text x="{pad}" y="{}">{hi:.4}</text><text x="{pad}" y="{}">{lo:.4}</text>"#, pad, h - pad);
    s += &format!(
        r#"<text x="{}" y="{}" fill="steelblue">best</text><text x="{}" y="{}" fill="orange">median</text></svg>"#,
        w - 120.0,
        h - 10.0,
        w - 60.0,
        h - 10.0
    );
    s
}
