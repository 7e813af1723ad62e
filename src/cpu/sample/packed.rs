//! The CPU mirror's decoding of compressed (packed) tracks: WGSL `sample_packed` and the
//! functions it calls in `shaders/shared/library.wgsl`, value for value.

use crate::layout::GpuTrack;
use crate::math::fast_slerp;
use glam::{Vec3, Vec4};

/// Words of a segment record of a blob of `tracks` tracks. WGSL `packed_record_words`.
fn packed_record_words(tracks: u32) -> u32 {
    2 + tracks + (6 * tracks).div_ceil(4)
}

/// Two rows of a track decoded together: a row's three stored values, the next row's, and the
/// component a rotation drops in their segment. WGSL `PackedPair`.
struct PackedPair {
    a: Vec3,
    b: Vec3,
    dropped: u32,
}

/// Word `i` (0 to 6) of a six-word window, 0 past its end.
fn window_word(window: &[u32; 6], i: u32) -> u32 {
    window.get(i as usize).copied().unwrap_or(0)
}

/// `width` bits (at most 24) at bit `at` of a window, least significant first. WGSL
/// `take_bits` reads the same bits: the next value of a `BitReader` that moves through the
/// window in order, where each value here is read at its own offset. The values are the same;
/// on a CPU a word picked at run time is the cheaper read, while a GPU that runs a thread per lane
/// (lavapipe) pays more for that pick than for the rest of the decode.
fn window_bits(window: &[u32; 6], at: u32, width: u32) -> u32 {
    let (i, shift) = (at / 32, at % 32);
    let next = if shift != 0 {
        window_word(window, i + 1) << (32 - shift)
    } else {
        0
    };
    ((window_word(window, i) >> shift) | next) & ((1u32 << width) - 1)
}

/// Byte `at / 8` of the two words `lo`, `hi`. WGSL `range_byte`.
fn range_byte(lo: u32, hi: u32, at: u32) -> u32 {
    if at < 32 {
        (lo >> at) & 0xff
    } else {
        (hi >> (at - 32)) & 0xff
    }
}

/// Track `k` of a blob of `tracks` tracks at rows `row` and `row + 1` of the segment whose
/// record is at word `record`, of `rows` rows; `bits` is the bitstream's first word and `range`
/// the track's clip range (min, extent). The row after a segment's last reads as 0. WGSL
/// `packed_pair`.
#[expect(clippy::too_many_arguments, reason = "keeps the signature of the shader function")]
fn packed_pair(
    packed: &[u32],
    record: u32,
    tracks: u32,
    k: u32,
    rows: u32,
    row: u32,
    bits: u32,
    range: [Vec3; 2],
) -> PackedPair {
    let p = |i: u32| packed[i as usize];
    let fields = p(record + 2 + k);
    let bytes = record + 2 + tracks + (6 * k) / 4;
    let shift = 8 * ((6 * k) % 4);
    let (lo_word, hi_word) = (p(bytes), p(bytes + 1));
    let field = (fields >> 16) & 0x3fff;
    let widths = [field % 25, field / 25 % 25, field / 625];
    let row_bits = widths[0] + widths[1] + widths[2];
    // The track's column: its rows one after another.
    let bit = p(record) + rows * (fields & 0xffff) + row * row_bits;
    // The words that hold the two rows (one where the segment has no next row).
    let w = bits + bit / 32;
    let words = (bit % 32 + (rows - row).min(2) * row_bits).div_ceil(32);
    let mut window = [0u32; 6];
    for (i, x) in window.iter_mut().enumerate().take(words as usize) {
        *x = p(w + i as u32);
    }
    let offsets = [0, widths[0], widths[0] + widths[1]].map(|o| o + bit % 32);
    let mut pair = PackedPair {
        a: Vec3::ZERO,
        b: Vec3::ZERO,
        dropped: fields >> 30,
    };
    for c in 0..3 {
        // The clip range's min + extent · (m + e · x) / 255, x = q / (2^width − 1) or ½.
        let width = widths[c];
        let m = range_byte(lo_word, hi_word, shift + 8 * c as u32) as f32;
        let e = range_byte(lo_word, hi_word, shift + 8 * (3 + c as u32)) as f32;
        let unit = 1.0 / ((1u32 << width) - 1).max(1) as f32;
        let x = |q: u32| if width > 0 { q as f32 * unit } else { 0.5 };
        let scale = range[1][c] * (1.0 / 255.0);
        pair.a[c] = range[0][c] + scale * (m + e * x(window_bits(&window, offsets[c], width)));
        pair.b[c] = range[0][c] + scale * (m + e * x(window_bits(&window, offsets[c] + row_bits, width)));
    }
    pair
}

/// The unit quaternion of a packed rotation: the three stored values, with the non-negative
/// component `dropped` restored. WGSL `packed_rotation`.
fn packed_rotation(v: Vec3, dropped: u32) -> Vec4 {
    let r = (1.0 - v.dot(v)).max(0.0).sqrt();
    match dropped {
        0 => Vec4::new(r, v.x, v.y, v.z),
        1 => Vec4::new(v.x, r, v.y, v.z),
        2 => Vec4::new(v.x, v.y, r, v.z),
        _ => v.extend(r),
    }
}

/// A packed track (a compressed clip's) at time `t`: the two frames around it decoded and
/// interpolated (rotations by [`fast_slerp`]). WGSL `sample_packed`.
#[must_use]
pub(crate) fn sample_packed(packed: &[u32], track: &GpuTrack, t: f32, rotation: bool) -> Vec4 {
    let p = |i: u32| packed[i as usize];
    let b = track.time_offset;
    let frame_count = track.key_count;
    // Track k of `tracks`, segments of 2^shift frames (layout::packed_track_ref).
    let k = track.value_offset & 0x3ff;
    let tracks = (track.value_offset >> 10) & 0x3ff;
    let shift = track.value_offset >> 20;
    let segment_frames = 1 << shift;
    let rate = f32::from_bits(p(b + 1));
    let record_words = packed_record_words(tracks);
    let records = b + 8 + 6 * tracks;
    let bits = records + ((frame_count + segment_frames - 1) >> shift) * record_words;
    let r = b + 8 + 6 * k;
    let f = |i: u32| f32::from_bits(p(r + i));
    let range = [Vec3::new(f(0), f(1), f(2)), Vec3::new(f(3), f(4), f(5))];
    let ft = (t * rate).clamp(0.0, (frame_count - 1) as f32);
    let f0 = (ft as u32).min(frame_count - 2);
    let u = ft - f0 as f32;
    // Frames f0 and f0 + 1 share a segment but where f0 ends one: decode the pair from f0's
    // segment, then, only there, the next segment's first row.
    let (s0, s1) = (f0 >> shift, (f0 + 1) >> shift);
    let (mut a, mut da) = (Vec3::ZERO, 3);
    let mut s = s0;
    let (c, dc) = loop {
        let first = s << shift;
        let rows = segment_frames.min(frame_count - first);
        let row = if s == s0 { f0 - first } else { 0 };
        let pair = packed_pair(packed, records + s * record_words, tracks, k, rows, row, bits, range);
        if s == s0 {
            a = pair.a;
            da = pair.dropped;
        }
        if s == s1 {
            break (if s == s0 { pair.b } else { pair.a }, pair.dropped);
        }
        s = s1;
    };
    if rotation {
        // Unit already (the restored component makes up the length): fast_slerp normalizes
        // its result.
        return fast_slerp(packed_rotation(a, da), packed_rotation(c, dc), u);
    }
    (a * (1.0 - u) + c * u).extend(0.0)
}
