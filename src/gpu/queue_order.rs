//! The team passes' queue order (`level_order`) as cuda/queue_order.cu sorts it: reads in
//! buckets of their weight, heaviest bucket first. The kernel's `weight_bucket`, for the CPU's
//! replay of the launches (bcuda-dev stack-profile --launch-tail) and the kernel's CPU test.

/// `1 << ORDER_BUCKET_BITS` buckets an octave of weights (`ORDER_BUCKET_BITS` in
/// cuda/queue_order.cu).
pub const ORDER_BUCKET_BITS: u32 = 4;

/// The bucket of a weight: the weight itself below `1 << ORDER_BUCKET_BITS`, else its highest
/// bit's octave and the `ORDER_BUCKET_BITS` bits below it, heavier higher.
pub fn weight_bucket(weight: u64) -> u32 {
    let k = ORDER_BUCKET_BITS;
    if weight < 1 << k {
        return weight as u32;
    }
    let octave = 63 - weight.leading_zeros();
    ((octave - k + 1) << k) + ((weight >> (octave - k)) as u32 & ((1 << k) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_grow_with_the_weight_sixteen_an_octave() {
        let buckets: Vec<u32> = [1u64, 15, 16, 17, 31, 32, 34, 1024, 1088, 2047, 2048].map(weight_bucket).to_vec();
        assert_eq!(buckets, [1, 15, 16, 17, 31, 32, 33, 112, 113, 127, 128]);
        assert!((1..100_000u64).all(|w| weight_bucket(w) <= weight_bucket(w + 1)));
    }
}
