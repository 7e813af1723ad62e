//! Vertex animation textures (VAT): a mesh's skinned positions and normals at evenly spaced
//! frames of its clips, baked once ([`crate::offline::vat::bake_vat`], `wgpu-anim bake-vat`) and
//! played in the vertex stage with no skeleton at all — the far LOD of a crowd. A culling
//! animator draws a character with its VAT when it is small on screen and plays one baked clip
//! alone ([`crate::gpu::Controller::set_vat`]), at the clip time its clock keeps, so that the
//! switch between the skinned mesh and the VAT is at the same pose, within the VAT's reported
//! error ([`VatReport`]).
//!
//! Each frame holds every vertex in two words (8 bytes): the position quantized to 16 bits per
//! axis in the box of every baked frame, and the normal in 8 + 8 bits, octahedron-encoded. A
//! clip of duration `T` baked at `fps` frames per second has `n = max(2, ceil(T fps) + 1)`
//! frames at times `T k / (n − 1)`; playback at time `t` lerps the two frames around
//! `t (n − 1) / T` (positions and normals, the normal normalized).
//!
//! The GPU reads the words [`Vat::gpu_words`] lays out (WGSL `wgpu_anim_vat_at` in
//! `shaders/skinning_module.wgsl`); [`Vat::vertex`] is its mirror.

use crate::cpu::SkinnedPoint;
use crate::error::{Error, Result};
use glam::{Vec2, Vec3};

/// One baked clip's frames in a [`Vat`].
#[derive(Clone, Debug, PartialEq)]
pub struct VatClip {
    /// The clip's index in its library ([`crate::ClipId::index`]).
    pub clip: u32,
    /// The clip's name, checked against the library a [`crate::gpu::GpuVat`] is made for.
    pub name: String,
    /// Its first frame among the VAT's frames.
    pub first_frame: u32,
    /// How many frames it has (at least 2, or 1 for a clip of zero duration).
    pub frame_count: u32,
    /// The clip's duration in seconds.
    pub duration: f32,
}

/// How far a [`Vat`]'s playback is from skinning, measured by the bake: at every frame and at
/// [`VatReport::STEPS`] − 1 evenly spaced times between each two, over every vertex of every
/// clip, its playback ([`Vat::vertex`]) against the CPU mirror's skinning of the same pose.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VatReport {
    /// The largest distance between a played and a skinned position, in model units.
    pub max_position_error: f32,
    /// The mean of those distances over every vertex of every pose compared.
    pub mean_position_error: f32,
    /// The largest angle between a played and a skinned normal, in degrees.
    pub max_normal_error_degrees: f32,
    /// The clip (library index) and the time where the largest position error is.
    pub worst: (u32, f32),
    /// How many poses were compared.
    pub poses_checked: u32,
}

impl VatReport {
    /// Times compared per interval between two frames (the frame itself and `STEPS − 1` between).
    pub const STEPS: u32 = 4;
}

/// A mesh's baked clips (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Vat {
    /// The mesh's name, used in errors.
    pub mesh: String,
    /// Index of the skeleton the clips animate.
    pub skeleton: u32,
    /// Vertices per frame.
    pub vertex_count: u32,
    /// Frames per second of the bake.
    pub fps: f32,
    /// The baked clips, in the order baked.
    pub clips: Vec<VatClip>,
    /// The corner of the box every quantized position is in.
    pub box_min: Vec3,
    /// Model units per step of a quantized position, per axis.
    pub box_step: Vec3,
    /// Every frame's vertices, two words each (frame-major): `x | y << 16`, `z | nx << 16 | ny << 24`.
    pub words: Vec<[u32; 2]>,
    /// The bake's measure of its error.
    pub report: VatReport,
}

/// Words of the GPU form's head ([`Vat::gpu_words`]).
pub const VAT_HEAD_WORDS: u32 = 12;
/// Words per clip in the GPU form's table.
pub const VAT_CLIP_WORDS: u32 = 4;

/// `p` quantized to 16 bits per axis in the box from `min` by `step`.
#[must_use]
pub fn quantize_position(p: Vec3, min: Vec3, step: Vec3) -> [u16; 3] {
    let q = ((p - min) / step).round().clamp(Vec3::ZERO, Vec3::splat(65535.0));
    [q.x as u16, q.y as u16, q.z as u16]
}

/// A unit normal octahedron-encoded in 8 + 8 bits.
#[must_use]
pub fn encode_normal(n: Vec3) -> [u8; 2] {
    let n = n / (n.x.abs() + n.y.abs() + n.z.abs()).max(f32::MIN_POSITIVE);
    let sign = |v: f32| if v >= 0.0 { 1.0 } else { -1.0 };
    let f = if n.z >= 0.0 {
        Vec2::new(n.x, n.y)
    } else {
        Vec2::new((1.0 - n.y.abs()) * sign(n.x), (1.0 - n.x.abs()) * sign(n.y))
    };
    let q = ((f * 0.5 + 0.5) * 255.0).round().clamp(Vec2::ZERO, Vec2::splat(255.0));
    [q.x as u8, q.y as u8]
}

/// The unit normal of [`encode_normal`]'s bits `x` and `y`. WGSL `wgpu_anim_vat_normal`.
#[must_use]
pub fn decode_normal(x: u32, y: u32) -> Vec3 {
    let f = Vec2::new(x as f32, y as f32) / 255.0 * 2.0 - 1.0;
    let z = 1.0 - f.x.abs() - f.y.abs();
    let t = (-z).max(0.0);
    let sign = |v: f32| if v >= 0.0 { 1.0 } else { -1.0 };
    Vec3::new(f.x - t * sign(f.x), f.y - t * sign(f.y), z).normalize()
}

/// A vertex's two words: its position quantized in the box from `min` by `step`, its normal.
#[must_use]
pub fn encode_vertex(position: Vec3, normal: Vec3, min: Vec3, step: Vec3) -> [u32; 2] {
    let [x, y, z] = quantize_position(position, min, step);
    let [nx, ny] = encode_normal(normal);
    [
        u32::from(x) | u32::from(y) << 16,
        u32::from(z) | u32::from(nx) << 16 | u32::from(ny) << 24,
    ]
}

/// The position and unit normal of a vertex's two words. WGSL `wgpu_anim_vat_decode`.
#[must_use]
pub fn decode_vertex(w: [u32; 2], min: Vec3, step: Vec3) -> (Vec3, Vec3) {
    let q = Vec3::new((w[0] & 0xffff) as f32, (w[0] >> 16) as f32, (w[1] & 0xffff) as f32);
    (min + q * step, decode_normal((w[1] >> 16) & 0xff, w[1] >> 24))
}

/// Where time `time` of a clip of `frame_count` frames over `duration` seconds falls: the frame
/// before it and how far towards the next, time clamped to the clip. WGSL `wgpu_anim_vat_at`.
#[must_use]
pub fn frame_position(time: f32, duration: f32, frame_count: u32) -> (u32, f32) {
    if frame_count < 2 || duration.is_nan() || duration <= 0.0 {
        return (0, 0.0);
    }
    let last = (frame_count - 1) as f32;
    let u = (time / duration).clamp(0.0, 1.0) * last;
    let k = u.floor().min(last - 1.0);
    (k as u32, u - k)
}

impl Vat {
    /// The baked clip of library index `clip`.
    #[must_use]
    pub fn clip(&self, clip: u32) -> Option<&VatClip> {
        self.clips.iter().find(|c| c.clip == clip)
    }

    /// Frames of every clip.
    #[must_use]
    pub fn frame_count(&self) -> u32 {
        (self.words.len() / self.vertex_count.max(1) as usize) as u32
    }

    /// Bytes the GPU holds for it ([`Vat::gpu_words`] for a library of `library_clips` clips).
    #[must_use]
    pub fn gpu_bytes(&self, library_clips: u32) -> u64 {
        4 * u64::from(VAT_HEAD_WORDS + VAT_CLIP_WORDS * library_clips) + 8 * self.words.len() as u64
    }

    /// Vertex `vertex` of clip `clip` (library index) played at `time` seconds (clamped to the
    /// clip): the two frames around it decoded and lerped, the normal normalized; `None` when the
    /// clip is not baked, the vertex is past the mesh, or the frames are not in `words` (a VAT
    /// whose fields disagree). The mirror of WGSL `wgpu_anim_vat_at`.
    #[must_use]
    pub fn vertex(&self, clip: u32, time: f32, vertex: u32) -> Option<SkinnedPoint> {
        let c = self.clip(clip)?;
        if vertex >= self.vertex_count {
            return None;
        }
        let (k, s) = frame_position(time, c.duration, c.frame_count);
        let at = |f: u32| {
            let frame = u64::from(c.first_frame) + u64::from(f);
            let w = self
                .words
                .get(usize::try_from(frame * u64::from(self.vertex_count) + u64::from(vertex)).ok()?)?;
            Some(decode_vertex(*w, self.box_min, self.box_step))
        };
        let (p0, n0) = at(k)?;
        let (p1, n1) = if c.frame_count > 1 { at(k + 1)? } else { (p0, n0) };
        // As WGSL's mix: a (1 − s) + b s.
        let mix = |a: Vec3, b: Vec3| a * (1.0 - s) + b * s;
        Some(SkinnedPoint {
            position: mix(p0, p1).extend(1.0),
            normal: mix(n0, n1).normalize().extend(0.0),
        })
    }

    /// The words the GPU reads, for a library of `library_clips` clips:
    ///
    /// - the head ([`VAT_HEAD_WORDS`]): vertex count, table length (`library_clips`), the first
    ///   word of the frames, 0; the box's corner (`f32` bits, then 0) and its step (then 0);
    /// - the table ([`VAT_CLIP_WORDS`] per library clip, by library index): first frame, frame
    ///   count (0: not baked), duration (`f32` bits), 0;
    /// - the frames' words.
    #[must_use]
    pub fn gpu_words(&self, library_clips: u32) -> Vec<u32> {
        let frames = VAT_HEAD_WORDS + VAT_CLIP_WORDS * library_clips;
        let v3 = |v: Vec3| [v.x.to_bits(), v.y.to_bits(), v.z.to_bits(), 0];
        let mut out = vec![self.vertex_count, library_clips, frames, 0];
        out.extend(v3(self.box_min));
        out.extend(v3(self.box_step));
        out.resize(frames as usize, 0);
        for c in self.clips.iter().filter(|c| c.clip < library_clips) {
            let at = (VAT_HEAD_WORDS + VAT_CLIP_WORDS * c.clip) as usize;
            out[at..at + 3].copy_from_slice(&[c.first_frame, c.frame_count, c.duration.to_bits()]);
        }
        out.extend(self.words.iter().flatten());
        out
    }

    /// The file form (little-endian): `WGAVAT01`, then the head, the clips (name length and
    /// name each) and the frames' words. [`Vat::from_bytes`] reads it back.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        let mut word = |w: u32| out.extend_from_slice(&w.to_le_bytes());
        let r = &self.report;
        for w in [
            self.skeleton,
            self.vertex_count,
            self.fps.to_bits(),
            self.clips.len() as u32,
        ]
        .into_iter()
        .chain(self.box_min.to_array().map(f32::to_bits))
        .chain(self.box_step.to_array().map(f32::to_bits))
        .chain([
            r.max_position_error.to_bits(),
            r.mean_position_error.to_bits(),
            r.max_normal_error_degrees.to_bits(),
            r.worst.0,
            r.worst.1.to_bits(),
            r.poses_checked,
            self.words.len() as u32,
        ]) {
            word(w);
        }
        for c in &self.clips {
            for w in [
                c.clip,
                c.first_frame,
                c.frame_count,
                c.duration.to_bits(),
                c.name.len() as u32,
            ] {
                out.extend_from_slice(&w.to_le_bytes());
            }
            out.extend_from_slice(c.name.as_bytes());
        }
        for w in self.words.iter().flatten() {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// Reads [`Vat::to_bytes`]'s form; `file` names it in errors.
    ///
    /// Errors ([`Error::Asset`]): not a VAT file, cut short, trailing bytes, or frames that do not
    /// match their clips.
    pub fn from_bytes(bytes: &[u8], file: &str) -> Result<Self> {
        let bad = |what: String| Error::Asset {
            file: file.to_owned(),
            what,
        };
        let rest = bytes
            .strip_prefix(MAGIC.as_slice())
            .ok_or_else(|| bad("not a VAT file (no WGAVAT01 header)".into()))?;
        let mut r = Reader { bytes: rest, at: 0 };
        let mut words = [0u32; 17];
        for w in &mut words {
            *w = r.word().ok_or_else(|| bad("cut short in its head".into()))?;
        }
        let f = f32::from_bits;
        let [skeleton, vertex_count, fps, clip_count, ..] = words;
        let mut clips = Vec::new();
        for k in 0..clip_count {
            let cut = || bad(format!("cut short in clip {k}"));
            let mut c = [0u32; 5];
            for w in &mut c {
                *w = r.word().ok_or_else(cut)?;
            }
            let name = r.take(c[4] as usize).ok_or_else(cut)?;
            clips.push(VatClip {
                clip: c[0],
                name: String::from_utf8_lossy(name).into_owned(),
                first_frame: c[1],
                frame_count: c[2],
                duration: f(c[3]),
            });
        }
        let count = words[16] as usize;
        let data = r
            .take(count.checked_mul(8).ok_or_else(|| bad("too many words".into()))?)
            .ok_or_else(|| bad(format!("cut short in its {count} vertex words")))?;
        if r.at != r.bytes.len() {
            return Err(bad(format!("{} bytes after its frames", r.bytes.len() - r.at)));
        }
        let words_of = data
            .chunks_exact(8)
            .map(|c| {
                [
                    u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                    u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
                ]
            })
            .collect();
        let vat = Self {
            mesh: file.to_owned(),
            skeleton,
            vertex_count,
            fps: f(fps),
            clips,
            box_min: Vec3::new(f(words[4]), f(words[5]), f(words[6])),
            box_step: Vec3::new(f(words[7]), f(words[8]), f(words[9])),
            words: words_of,
            report: VatReport {
                max_position_error: f(words[10]),
                mean_position_error: f(words[11]),
                max_normal_error_degrees: f(words[12]),
                worst: (words[13], f(words[14])),
                poses_checked: words[15],
            },
        };
        vat.check().map_err(bad)?;
        Ok(vat)
    }

    /// Whether its clips' frames are its words, each clip's duration finite and its box finite;
    /// what is wrong otherwise.
    pub(crate) fn check(&self) -> std::result::Result<(), String> {
        let frames = self.clips.iter().try_fold(0u64, |at, c| {
            if u64::from(c.first_frame) != at || c.frame_count == 0 || !c.duration.is_finite() || c.duration < 0.0 {
                return Err(format!(
                    "clip '{}' has frames {}..+{} over {} s where frame {at} is next",
                    c.name, c.first_frame, c.frame_count, c.duration
                ));
            }
            Ok(at + u64::from(c.frame_count))
        })?;
        if frames * u64::from(self.vertex_count) != self.words.len() as u64 {
            return Err(format!(
                "{frames} frames of {} vertices, but {} vertex words",
                self.vertex_count,
                self.words.len()
            ));
        }
        if !(self.box_min.is_finite() && self.box_step.is_finite() && self.box_step.min_element() > 0.0) {
            return Err(format!("a box from {} by {} steps", self.box_min, self.box_step));
        }
        Ok(())
    }
}

const MAGIC: [u8; 8] = *b"WGAVAT01";

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    fn word(&mut self) -> Option<u32> {
        self.take(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normals_survive_their_eight_bit_encoding_within_a_degree_and_a_half() {
        let mut worst = 0.0f32;
        for i in 0..2000 {
            // Points spread over the sphere (a Fibonacci lattice), both poles and the seams too.
            let z = 1.0 - 2.0 * (i as f32 + 0.5) / 2000.0;
            let a = i as f32 * 2.399_963;
            let r = (1.0 - z * z).sqrt();
            for n in [
                Vec3::new(r * a.cos(), r * a.sin(), z),
                Vec3::Z,
                -Vec3::Z,
                Vec3::X,
                -Vec3::Y,
            ] {
                let [x, y] = encode_normal(n);
                let back = decode_normal(u32::from(x), u32::from(y));
                worst = worst.max(n.dot(back).clamp(-1.0, 1.0).acos().to_degrees());
            }
        }
        assert!(worst < 1.5, "worst normal error {worst}°");
        assert!(worst > 0.05, "eight bits cannot be this exact: {worst}°");
    }

    #[test]
    fn positions_round_to_half_a_step() {
        let (min, step) = (Vec3::new(-1.0, 0.0, -2.0), Vec3::new(1e-4, 3e-5, 2e-4));
        for p in [
            Vec3::new(-1.0, 0.0, -2.0),
            Vec3::new(0.5, 1.2, 3.0),
            Vec3::new(5.5, 1.96, 11.1),
        ] {
            let (back, _) = decode_vertex(encode_vertex(p, Vec3::Y, min, step), min, step);
            assert!(
                ((back - p).abs() - 0.5 * step).max_element() <= 1e-6,
                "{p} came back {back}"
            );
        }
    }

    #[test]
    fn frame_positions_cover_the_clip_and_clamp() {
        assert_eq!(frame_position(0.0, 2.0, 5), (0, 0.0));
        assert_eq!(frame_position(2.0, 2.0, 5), (3, 1.0));
        assert_eq!(frame_position(1.25, 2.0, 5), (2, 0.5));
        assert_eq!(frame_position(-1.0, 2.0, 5), (0, 0.0));
        assert_eq!(frame_position(9.0, 2.0, 5), (3, 1.0));
        assert_eq!(frame_position(0.3, 0.0, 1), (0, 0.0));
        // Whatever a non-finite time does, it reads frames of the clip.
        assert!(frame_position(f32::NAN, 2.0, 5).0 <= 3 && frame_position(f32::INFINITY, 2.0, 5).0 <= 3);
    }

    #[test]
    fn a_file_round_trips_and_bad_files_are_named() {
        let vat = Vat {
            mesh: "m".into(),
            skeleton: 0,
            vertex_count: 2,
            fps: 30.0,
            clips: vec![VatClip {
                clip: 3,
                name: "walk".into(),
                first_frame: 0,
                frame_count: 2,
                duration: 1.0,
            }],
            box_min: Vec3::ZERO,
            box_step: Vec3::splat(1e-4),
            words: vec![[1, 2], [3, 4], [5, 6], [7, 8]],
            report: VatReport::default(),
        };
        let bytes = vat.to_bytes();
        let back = Vat::from_bytes(&bytes, "m").unwrap();
        assert_eq!(back, vat);
        let cut = Vat::from_bytes(&bytes[..bytes.len() - 3], "crowd.vat")
            .unwrap_err()
            .to_string();
        assert!(cut.contains("crowd.vat") && cut.contains("cut short"), "{cut}");
        let mut long = bytes.clone();
        long.push(0);
        assert!(
            Vat::from_bytes(&long, "x")
                .unwrap_err()
                .to_string()
                .contains("1 bytes after")
        );
        assert!(
            Vat::from_bytes(b"PNG", "x")
                .unwrap_err()
                .to_string()
                .contains("not a VAT")
        );
        let words = vat.gpu_words(4);
        assert_eq!(words.len(), (VAT_HEAD_WORDS + 4 * VAT_CLIP_WORDS) as usize + 8);
        assert_eq!(&words[(VAT_HEAD_WORDS + 12) as usize..][..3], &[0, 2, 1f32.to_bits()]);
        assert_eq!(words[(VAT_HEAD_WORDS + 5) as usize], 0, "clip 1 is not baked");
    }
}
