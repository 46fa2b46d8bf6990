//! Banded global alignment with affine gaps and a CIGAR by backtracking: a port of the
//! ksw_global that bwa samse uses to place the gaps of a gapped hit, with its exact scoring
//! order and tie-breaking (match before gap; deletion before insertion).

const MINUS_INF: i32 = -0x4000_0000;

/// CIGAR operations as in bwa (and BAM): M, I, D, S.
pub const OP_M: u32 = 0;
pub const OP_I: u32 = 1;
pub const OP_D: u32 = 2;
pub const OP_S: u32 = 3;

/// bwa_fill_scmat(a, b): a 5x5 matrix, match `a`, mismatch `-b`, any N -1.
pub fn score_matrix(a: i8, b: i8) -> [i8; 25] {
    let mut mat = [-1i8; 25];
    for i in 0..4 {
        for j in 0..4 {
            mat[i * 5 + j] = if i == j { a } else { -b };
        }
    }
    mat
}

fn push_cigar(cigar: &mut Vec<u32>, op: u32, len: u32) {
    match cigar.last_mut() {
        Some(last) if *last & 0xf == op => *last += len << 4,
        _ => cigar.push(len << 4 | op),
    }
}

/// Aligns `query` to `target` end to end within band `w`; returns the score and the CIGAR
/// (len << 4 | op, in query order).
pub fn global(query: &[u8], target: &[u8], mat: &[i8; 25], gapo: i32, gape: i32, w: i32) -> (i32, Vec<u32>) {
    let (qlen, tlen) = (query.len() as i32, target.len() as i32);
    let (oe_del, oe_ins, e_del, e_ins) = (gapo + gape, gapo + gape, gape, gape);
    let n_col = qlen.min(2 * w + 1).max(0) as usize;
    let mut z = vec![0u8; n_col * tlen as usize];
    // (H, E) per query column; H(i-1, j-1) and E(i, j) at the start of row i.
    let mut h_row = vec![MINUS_INF; qlen as usize + 1];
    let mut e_row = vec![MINUS_INF; qlen as usize + 1];
    h_row[0] = 0;
    for j in 1..=qlen.min(w) {
        h_row[j as usize] = -(gapo + gape * j);
    }
    // Query profile: the scores of each target base against the whole query.
    let profile: Vec<i32> = (0..5).flat_map(|t| query.iter().map(move |&q| mat[t * 5 + q as usize] as i32)).collect();
    for i in 0..tlen {
        let row = &profile[target[i as usize] as usize * qlen as usize..][..qlen as usize];
        let beg = if i > w { i - w } else { 0 };
        let end = (i + w + 1).min(qlen);
        let mut f = MINUS_INF;
        let mut h1 = if beg == 0 { -(gapo + gape * (i + 1)) } else { MINUS_INF };
        // The band can lie past the query's end (then the row has no cells).
        let (b, e_) = (beg as usize, end.max(beg) as usize);
        let zi = &mut z[i as usize * n_col..][..e_ - b];
        let cells = h_row[b..e_].iter_mut().zip(e_row[b..e_].iter_mut()).zip(&row[b..e_]).zip(zi.iter_mut());
        for (((hp, ep), &score), zc) in cells {
            let (mut m, mut e) = (*hp, *ep);
            *hp = h1;
            m += score;
            let mut d: u8 = if m >= e { 0 } else { 1 };
            let mut h = if m >= e { m } else { e };
            if h < f {
                d = 2;
                h = f;
            }
            h1 = h;
            let t = m - oe_del;
            e -= e_del;
            if e > t {
                d |= 1 << 2;
            } else {
                e = t;
            }
            *ep = e;
            let t = m - oe_ins;
            f -= e_ins;
            if f > t {
                d |= 2 << 4;
            } else {
                f = t;
            }
            *zc = d;
        }
        h_row[end as usize] = h1;
        e_row[end as usize] = MINUS_INF;
    }
    let score = h_row[qlen as usize];
    let mut cigar = Vec::new();
    let (mut i, mut k) = (tlen - 1, (tlen - 1 + w + 1).min(qlen) - 1);
    let mut which = 0u32;
    while i >= 0 && k >= 0 {
        let col = k - if i > w { i - w } else { 0 };
        which = (z[i as usize * n_col + col as usize] >> (which << 1) & 3) as u32;
        match which {
            0 => {
                push_cigar(&mut cigar, OP_M, 1);
                i -= 1;
                k -= 1;
            }
            1 => {
                push_cigar(&mut cigar, OP_D, 1);
                i -= 1;
            }
            _ => {
                push_cigar(&mut cigar, OP_I, 1);
                k -= 1;
            }
        }
    }
    if i >= 0 {
        push_cigar(&mut cigar, OP_D, (i + 1) as u32);
    }
    if k >= 0 {
        push_cigar(&mut cigar, OP_I, (k + 1) as u32);
    }
    cigar.reverse();
    (score, cigar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_a_deletion_and_an_insertion() {
        let mat = score_matrix(1, 3);
        let target = [0, 1, 2, 3, 0, 1, 2, 3, 3, 2, 1, 0, 0, 1];
        // Query lacks target[6..8]: 6M 2D 6M.
        let query: Vec<u8> = target[..6].iter().chain(&target[8..]).copied().collect();
        let (_, cigar) = global(&query, &target, &mat, 5, 1, 50);
        assert_eq!(cigar, vec![6 << 4 | OP_M, 2 << 4 | OP_D, 6 << 4 | OP_M]);
        let (_, cigar) = global(&target, &query, &mat, 5, 1, 50);
        assert_eq!(cigar, vec![6 << 4 | OP_M, 2 << 4 | OP_I, 6 << 4 | OP_M]);
    }
}
