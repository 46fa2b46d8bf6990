//! bwa aln's option arithmetic (bwtaln.c): the differences allowed in a read of a given length
//! (bwa_cal_maxdiff), a batch's options (bwa_cal_sa_reg_gap caps the gap opens by the longest
//! read's differences) and a hit's score. The CPU search, the GPU driver and samse share them.

use crate::sai::{AlnHit, GapOptions, MODE_GAPE};

/// A hit's score from its mismatches, gap opens and gap extensions (bwa's aln_score).
pub fn aln_score(n_mm: i32, n_gapo: i32, n_gape: i32, opt: &GapOptions) -> i32 {
    n_mm * opt.s_mm + n_gapo * opt.s_gapo + n_gape * opt.s_gape
}

/// A hit's differences as bwa's search counts them against its limit (its first hit's sets
/// the limit after it): gap extensions count in bwa's default mode (`MODE_GAPE`).
pub fn hit_diffs(h: &AlnHit, opt: &GapOptions) -> i32 {
    let gape = if opt.mode & MODE_GAPE != 0 { h.n_gape as i32 } else { 0 };
    h.n_mm as i32 + h.n_gapo as i32 + gape
}

/// bwa_cal_maxdiff: the most differences expected in `len` bases at error rate `err`, with
/// probability `thres` of missing more. (bwa's factorial is a C int; its overflow is kept.)
pub fn cal_maxdiff(len: i32, err: f64, thres: f64) -> i32 {
    let elambda = (-(len as f64) * err).exp();
    let (mut sum, mut y, mut x) = (elambda, 1.0f64, 1i32);
    for k in 1..1000 {
        y *= len as f64 * err;
        x = x.wrapping_mul(k);
        sum += elambda * y / x as f64;
        if 1.0 - sum < thres {
            return k;
        }
    }
    2
}

/// bwa's BWA_AVG_ERR.
pub const AVG_ERR: f64 = 0.02;

/// The options of one batch as bwa_cal_sa_reg_gap derives them: `max_gapo` is capped by the
/// `max_diff` of the longest read of the batch.
pub fn batch_options(opt: &GapOptions, max_len: usize) -> GapOptions {
    let mut local = *opt;
    if opt.fnr > 0.0 {
        local.max_diff = cal_maxdiff(max_len as i32, AVG_ERR, opt.fnr as f64);
    }
    if local.max_diff < local.max_gapo {
        local.max_gapo = local.max_diff;
    }
    local
}
