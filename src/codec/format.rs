//! The packed form of a compressed clip's animated tracks: one block of 32-bit words per clip
//! (the *blob*), read in place by the GPU (`sample_packed` in `shaders/shared/library.wgsl`), by
//! its CPU mirror (`cpu::sample::sample_packed`) and by the f64 decoder
//! ([`crate::offline::decompress`]).
//!
//! ```text
//! word 0   frame count F (≥ 2)              word 4  segment count ⌈F / S⌉
//! word 1   frames per second (f32 bits)     word 5  words per segment record R = 2 + K + ⌈6K / 4⌉
//! word 2   track count K (≥ 1)              word 6  first word of the bitstream
//! word 3   frames per segment S (2ⁿ)        word 7  words of the bitstream
//! 8 ..     per track: min x, y, z, extent x, y, z (f32): the clip's range of each component
//! then     per segment a record of R words:
//!            0       first bit of the segment in the bitstream
//!            1       bits per frame (every track's components)
//!            2 + k   track k: bits per frame of the tracks before it (bits 0–15) | widths x + 25·y + 625·z of its
//!                    three stored components (bits 16–29) | the component a rotation drops
//!                    (bits 30–31)
//!            2 + K   bytes 6k + c: track k's segment range, min (c < 3) and extent (c ≥ 3) of
//!                    each component in 255ths of the clip's range
//! then     the bitstream: segment 0, then segment 1, …; within a segment of n frames, track 0's
//!          frames, then track 1's, …: track k's frame r at bit first + n · offset_k + r · (its
//!          widths' sum), its components x, y, z in turn (a decode's two frames are adjacent);
//!          values least significant bit first, a value may straddle two words
//! ```
//!
//! A component of width `b` at a frame holds `q < 2^b`; its value is
//! `lo + ex · q / (2^b − 1)` (the segment's range centre when `b = 0`), where
//! `lo = min + extent · m / 255` and `ex = extent · e / 255`. A rotation stores three of the unit
//! quaternion's x, y, z, w in order and drops one, chosen per segment, made non-negative and
//! restored as √(1 − a² − b² − c²): w where it stays large, else the component that stays largest
//! over the segment, so that a character facing backwards (w near 0) loses no precision. A track's
//! clip range is over its three stored values, whichever components they are.

use glam::{DQuat, DVec3};

/// Words before the per-track ranges.
pub const HEADER_WORDS: usize = 8;
/// Widest component, in bits.
pub const MAX_WIDTH: u32 = 24;
/// Segment ranges are in this many steps of the clip's range.
pub const RANGE_STEPS: u32 = 255;
/// Most frames per segment.
pub const MAX_SEGMENT_FRAMES: u32 = 256;
/// Most bits per row (the 16-bit offset field).
pub const MAX_ROW_BITS: u32 = 1 << 16;
/// Most tracks in a blob: each of the widest fits the 16-bit offset field (fewer than 1024, which
/// `layout::packed_track_ref` needs).
pub const MAX_TRACKS: u32 = MAX_ROW_BITS / (3 * MAX_WIDTH);
const _: () = assert!(MAX_TRACKS < 1024);
/// A record's widths field holds `x + 25·y + 625·z`, below this.
const WIDTHS_FIELD: u32 = 25 * 25 * 25;

/// Words of a segment record for `tracks` tracks.
#[must_use]
pub const fn record_words(tracks: u32) -> u32 {
    2 + tracks + (6 * tracks).div_ceil(4)
}

/// A blob's header, checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header {
    /// Frames, the first at time 0 and the last at the clip's duration.
    pub frame_count: u32,
    /// Frames per second.
    pub rate: f32,
    /// Animated tracks.
    pub tracks: u32,
    /// Frames per segment.
    pub segment_frames: u32,
    /// Segments.
    pub segment_count: u32,
    /// First word of the bitstream.
    pub bits_offset: u32,
    /// Words of the bitstream.
    pub bits_words: u32,
}

/// Where a blob's bytes go: the part of its size that is per clip, per segment and per frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlobBytes {
    /// The header and the tracks' clip ranges.
    pub clip: usize,
    /// The segment records: each segment's first bit and row size, and per track its column,
    /// widths, dropped component and segment range.
    pub records: usize,
    /// The quantized frames.
    pub bitstream: usize,
    /// Segments.
    pub segments: u32,
    /// Tracks.
    pub tracks: u32,
}

impl BlobBytes {
    /// Record bytes per track per segment, the segment's own two words shared among its tracks.
    #[must_use]
    pub fn per_track_segment(&self) -> f64 {
        self.records as f64 / (f64::from(self.segments) * f64::from(self.tracks)).max(1.0)
    }
}

/// A blob whose every offset, width and range has been checked against its length, so that no
/// decode reads outside it.
#[derive(Clone, Copy, Debug)]
pub struct Blob<'a> {
    words: &'a [u32],
    header: Header,
}

/// Where a track's component is in a segment, and its range there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Component {
    /// Bits per frame of the tracks before it (its column starts at this times the segment's
    /// frames), plus the widths of the components before this one.
    pub bit: u32,
    /// Width in bits (0 to [`MAX_WIDTH`]).
    pub width: u32,
    /// Segment range minimum, in 255ths of the clip range.
    pub min: u32,
    /// Segment range extent, in 255ths of the clip range.
    pub extent: u32,
    /// For a rotation, the component (x, y, z, w) the segment drops.
    pub dropped: u32,
}

impl<'a> Blob<'a> {
    /// Checks `words` as a blob.
    ///
    /// Errors: what is wrong (a count, an offset or a width out of range, a range not finite, a
    /// bitstream too short).
    pub fn parse(words: &'a [u32]) -> Result<Self, String> {
        if words.len() < HEADER_WORDS {
            return Err(format!(
                "{} words, fewer than the {HEADER_WORDS}-word header",
                words.len()
            ));
        }
        let header = Header {
            frame_count: words[0],
            rate: f32::from_bits(words[1]),
            tracks: words[2],
            segment_frames: words[3],
            segment_count: words[4],
            bits_offset: words[6],
            bits_words: words[7],
        };
        let h = header;
        if h.frame_count < 2 {
            return Err(format!("{} frames; at least 2 are needed", h.frame_count));
        }
        if !(h.rate.is_finite() && h.rate > 0.0) {
            return Err(format!("frame rate {} is not finite and positive", h.rate));
        }
        if h.tracks == 0 || h.tracks > MAX_TRACKS {
            return Err(format!("{} tracks (1 to {MAX_TRACKS})", h.tracks));
        }
        if !(h.segment_frames.is_power_of_two() && h.segment_frames <= MAX_SEGMENT_FRAMES) {
            return Err(format!(
                "{} frames per segment (a power of two, 1 to {MAX_SEGMENT_FRAMES})",
                h.segment_frames
            ));
        }
        if h.segment_count != h.frame_count.div_ceil(h.segment_frames) {
            return Err(format!(
                "{} segments for {} frames of {} (expected {})",
                h.segment_count,
                h.frame_count,
                h.segment_frames,
                h.frame_count.div_ceil(h.segment_frames)
            ));
        }
        if words[5] != record_words(h.tracks) {
            return Err(format!(
                "segment records of {} words (expected {})",
                words[5],
                record_words(h.tracks)
            ));
        }
        let records = HEADER_WORDS as u64 + 6 * u64::from(h.tracks);
        let bits = records + u64::from(h.segment_count) * u64::from(words[5]);
        if u64::from(h.bits_offset) != bits {
            return Err(format!("bitstream at word {} (expected {bits})", h.bits_offset));
        }
        if u64::from(h.bits_offset) + u64::from(h.bits_words) != words.len() as u64 {
            return Err(format!(
                "{} words; the header says {}",
                words.len(),
                u64::from(h.bits_offset) + u64::from(h.bits_words)
            ));
        }
        let blob = Blob { words, header };
        for k in 0..h.tracks {
            for c in 0..3 {
                let (min, extent) = blob.clip_range(k, c);
                if !(min.is_finite() && extent.is_finite() && extent >= 0.0) {
                    return Err(format!("track {k}: component {c} range {min} + {extent} is not finite"));
                }
            }
        }
        let total_bits = u64::from(h.bits_words) * 32;
        for s in 0..h.segment_count {
            let (start, row_bits) = blob.segment(s);
            if row_bits > MAX_ROW_BITS {
                return Err(format!("segment {s}: rows of {row_bits} bits (at most {MAX_ROW_BITS})"));
            }
            let rows = blob.segment_rows(s);
            if u64::from(start) + u64::from(rows) * u64::from(row_bits) > total_bits {
                return Err(format!("segment {s}: its rows end past the bitstream"));
            }
            for k in 0..h.tracks {
                let r = blob.record(s);
                let meta = blob.words[r + 2 + k as usize];
                if (meta >> 16) & 0x3fff >= WIDTHS_FIELD {
                    return Err(format!(
                        "segment {s}, track {k}: widths field {}",
                        (meta >> 16) & 0x3fff
                    ));
                }
                let mut end = 0;
                for c in 0..3 {
                    let comp = blob.component(s, k, c);
                    if comp.width > MAX_WIDTH {
                        return Err(format!("segment {s}, track {k}: width {} > {MAX_WIDTH}", comp.width));
                    }
                    end = comp.bit + comp.width;
                }
                if end > row_bits {
                    return Err(format!(
                        "segment {s}, track {k}: its bits end past the row of {row_bits}"
                    ));
                }
            }
        }
        Ok(blob)
    }

    /// The header.
    #[must_use]
    pub fn header(&self) -> Header {
        self.header
    }

    /// Where the blob's bytes go.
    #[must_use]
    pub fn bytes(&self) -> BlobBytes {
        let h = self.header;
        let clip = HEADER_WORDS + 6 * h.tracks as usize;
        BlobBytes {
            clip: 4 * clip,
            records: 4 * (h.bits_offset as usize - clip),
            bitstream: 4 * h.bits_words as usize,
            segments: h.segment_count,
            tracks: h.tracks,
        }
    }

    /// The words.
    #[must_use]
    pub fn words(&self) -> &'a [u32] {
        self.words
    }

    /// Track `k`'s clip range of component `c`: (min, extent).
    #[must_use]
    pub fn clip_range(&self, k: u32, c: u32) -> (f32, f32) {
        let b = HEADER_WORDS + 6 * k as usize;
        (
            f32::from_bits(self.words[b + c as usize]),
            f32::from_bits(self.words[b + 3 + c as usize]),
        )
    }

    fn record(&self, s: u32) -> usize {
        HEADER_WORDS + 6 * self.header.tracks as usize + (s * record_words(self.header.tracks)) as usize
    }

    /// Segment `s`'s first bit and bits per row.
    #[must_use]
    pub fn segment(&self, s: u32) -> (u32, u32) {
        let r = self.record(s);
        (self.words[r], self.words[r + 1])
    }

    /// Frames in segment `s`.
    #[must_use]
    pub fn segment_rows(&self, s: u32) -> u32 {
        let h = self.header;
        (h.frame_count - s * h.segment_frames).min(h.segment_frames)
    }

    /// Track `k`'s component `c` in segment `s`.
    #[must_use]
    pub fn component(&self, s: u32, k: u32, c: u32) -> Component {
        let r = self.record(s);
        let meta = self.words[r + 2 + k as usize];
        let field = (meta >> 16) & 0x3fff;
        let widths = [field % 25, field / 25 % 25, field / 625];
        let bit = (meta & 0xffff) + widths[..c as usize].iter().sum::<u32>();
        let bytes = r + 2 + self.header.tracks as usize;
        let byte = |i: u32| (self.words[bytes + (i / 4) as usize] >> (8 * (i % 4))) & 0xff;
        Component {
            bit,
            width: widths[c as usize],
            min: byte(6 * k + c),
            extent: byte(6 * k + 3 + c),
            dropped: meta >> 30,
        }
    }

    /// The raw `width` bits at `bit` of the bitstream.
    #[must_use]
    pub fn bits(&self, bit: u32, width: u32) -> u32 {
        read_bits(&self.words[self.header.bits_offset as usize..], bit, width)
    }

    /// Track `k`'s quantized component `c` at frame `f`.
    #[must_use]
    pub fn quantized(&self, k: u32, c: u32, f: u32) -> (Component, u32) {
        let s = f / self.header.segment_frames;
        let (start, _) = self.segment(s);
        let comp = self.component(s, k, c);
        let row = f % self.header.segment_frames;
        let first = self.component(s, k, 0);
        let track_bits: u32 = (0..3).map(|c| self.component(s, k, c).width).sum();
        let column = start + self.segment_rows(s) * first.bit;
        (
            comp,
            self.bits(column + row * track_bits + (comp.bit - first.bit), comp.width),
        )
    }

    /// Track `k` at frame `f`, in f64: its three stored values and, for a rotation, the component
    /// they leave out.
    #[must_use]
    pub fn frame_f64(&self, k: u32, f: u32) -> (DVec3, u32) {
        let mut v = DVec3::ZERO;
        let mut dropped = 3;
        for c in 0..3 {
            let (comp, q) = self.quantized(k, c, f);
            let (min, extent) = self.clip_range(k, c);
            v[c as usize] = dequantize_f64(f64::from(min), f64::from(extent), comp, q);
            dropped = comp.dropped;
        }
        (v, dropped)
    }
}

/// The frame at or before `t` (at most `frame_count − 2`) and the fraction to the next.
#[must_use]
pub fn frame_at(frame_count: u32, rate: f64, t: f64) -> (u32, f64) {
    let last = f64::from(frame_count - 1);
    let ft = (t * rate).clamp(0.0, last);
    let f0 = (ft.floor() as u32).min(frame_count - 2);
    (f0, ft - f64::from(f0))
}

/// `width` bits at `bit` of `words`, least significant bit first.
#[must_use]
pub fn read_bits(words: &[u32], bit: u32, width: u32) -> u32 {
    if width == 0 {
        return 0;
    }
    let w = (bit / 32) as usize;
    let shift = bit % 32;
    let mut v = words[w] >> shift;
    if shift + width > 32 {
        v |= words[w + 1] << (32 - shift);
    }
    v & ((1u32 << width) - 1)
}

/// A component's value in f64.
#[must_use]
pub fn dequantize_f64(min: f64, extent: f64, comp: Component, q: u32) -> f64 {
    let (lo, ex) = segment_range_f64(min, extent, comp.min, comp.extent);
    let x = if comp.width == 0 {
        0.5
    } else {
        f64::from(q) / f64::from((1u32 << comp.width) - 1)
    };
    lo + ex * x
}

/// A segment's range (lo, extent) in f64.
#[must_use]
pub fn segment_range_f64(min: f64, extent: f64, m: u32, e: u32) -> (f64, f64) {
    let steps = f64::from(RANGE_STEPS);
    (min + extent * (f64::from(m) / steps), extent * (f64::from(e) / steps))
}

/// The unit quaternion whose component `dropped` (x, y, z, w: 0 to 3) is the non-negative one
/// left out of `stored`, the other three in order.
#[must_use]
pub fn rotation_from_stored(stored: DVec3, dropped: u32) -> DQuat {
    let r = (1.0 - stored.length_squared()).max(0.0).sqrt();
    let v = stored.to_array();
    let q = match dropped {
        0 => [r, v[0], v[1], v[2]],
        1 => [v[0], r, v[1], v[2]],
        2 => [v[0], v[1], r, v[2]],
        _ => [v[0], v[1], v[2], r],
    };
    DQuat::from_array(q).normalize()
}

/// The three components of `q` a rotation stores when it drops component `dropped`, with the
/// quaternion's sign chosen so that the dropped one is non-negative.
#[must_use]
pub fn stored_of_rotation(q: DQuat, dropped: u32) -> DVec3 {
    let a = q.to_array();
    let sign = if a[dropped as usize] < 0.0 { -1.0 } else { 1.0 };
    let mut v = [0.0; 3];
    let mut i = 0;
    for (c, x) in a.iter().enumerate() {
        if c != dropped as usize {
            v[i] = sign * x;
            i += 1;
        }
    }
    DVec3::from_array(v)
}

/// Writes blobs.
pub(crate) struct Writer {
    pub frame_count: u32,
    pub rate: f32,
    pub segment_frames: u32,
    /// Per track: min x, y, z, extent x, y, z.
    pub ranges: Vec<[f32; 6]>,
}

/// One track in one segment, as written.
#[derive(Clone, Debug)]
pub(crate) struct SegmentTrack {
    pub widths: [u32; 3],
    /// For a rotation, the component it drops (3 otherwise).
    pub dropped: u32,
    pub min: [u32; 3],
    pub extent: [u32; 3],
    /// Per frame of the segment, the quantized components.
    pub q: Vec<[u32; 3]>,
}

impl Writer {
    /// The blob of `segments` (per segment, per track).
    pub fn write(&self, segments: &[Vec<SegmentTrack>]) -> Vec<u32> {
        let k = self.ranges.len() as u32;
        let mut words = vec![
            self.frame_count,
            self.rate.to_bits(),
            k,
            self.segment_frames,
            segments.len() as u32,
            record_words(k),
            0,
            0,
        ];
        for r in &self.ranges {
            words.extend(r.iter().map(|x| x.to_bits()));
        }
        let mut bits = BitWriter::default();
        for seg in segments {
            let row_bits: u32 = seg.iter().map(|t| t.widths.iter().sum::<u32>()).sum();
            words.push(bits.len);
            words.push(row_bits);
            let mut offset = 0;
            for t in seg {
                let [x, y, z] = t.widths;
                words.push(offset | (x + 25 * y + 625 * z) << 16 | t.dropped << 30);
                offset += x + y + z;
            }
            let mut bytes: Vec<u8> = Vec::with_capacity(6 * seg.len());
            for t in seg {
                bytes.extend(t.min.iter().chain(&t.extent).map(|&b| b as u8));
            }
            bytes.resize(bytes.len().div_ceil(4) * 4, 0);
            words.extend(
                bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
            for t in seg {
                for q in &t.q {
                    for (&v, &w) in q.iter().zip(&t.widths) {
                        bits.push(v, w);
                    }
                }
            }
        }
        words[6] = words.len() as u32;
        words[7] = bits.words.len() as u32;
        words.extend(bits.words);
        words
    }
}

#[derive(Default)]
struct BitWriter {
    words: Vec<u32>,
    len: u32,
}

impl BitWriter {
    fn push(&mut self, v: u32, width: u32) {
        if width == 0 {
            return;
        }
        let shift = self.len % 32;
        if shift == 0 {
            self.words.push(0);
        }
        let last = self.words.len() - 1;
        self.words[last] |= v << shift;
        if shift + width > 32 {
            self.words.push(v >> (32 - shift));
        }
        self.len += width;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_written_are_read_back_at_every_width_and_alignment() {
        let mut w = BitWriter::default();
        let mut expect = Vec::new();
        let mut x = 12345u32;
        for width in (0..=MAX_WIDTH).cycle().take(500) {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let v = if width == 0 { 0 } else { x & ((1 << width) - 1) };
            expect.push((w.len, width, v));
            w.push(v, width);
        }
        for (bit, width, v) in expect {
            assert_eq!(read_bits(&w.words, bit, width), v, "bit {bit} width {width}");
        }
    }
}
