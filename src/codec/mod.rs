//! Clip compression: a clip's animated tracks sampled uniformly, range-reduced per clip and per
//! segment of frames, and quantized to per-segment, per-component bit widths chosen by an error
//! metric measured in object space; decoded on the GPU with random access (see [`format`]).
//!
//! The method is the one of ACL (Animation Compression Library) and *Game Engine Architecture*
//! §11.8: constant and rest-pose tracks are stripped; a rotation keeps three of x, y, z, w and
//! drops, per segment, w or (where w comes near 0) the component that stays largest; the
//! error of a pose is the distance between where the raw and the decoded clip put virtual points
//! on a shell around each joint (three points, `shell` from the joint along its axes), in object
//! space, so a parent's error counts in each of its children. Bit widths start at the least each
//! component needs alone, are raised along the worst joint's chain until every joint of the
//! segment is within the threshold, then lowered one bit at a time wherever the threshold still
//! holds.
//!
//! A packed rotation is quantized against its parent as decoded, not as authored
//! (compensation): parents first, each stores the local rotation that puts the joint at
//! the reference's object-space orientation under its decoded parent. A joint's orientation error
//! is then its own quantization's and does not pile up down a chain of ancestors, which on a
//! motion-capture take saves 6–7 % of the bytes at the same bounds.
//!
//! Tracks the format cannot hold within the threshold (step keys or cubic curves between frames,
//! values too wide for [`format::MAX_WIDTH`] bits) stay raw, track by track, and the report names
//! them. The library plays raw and compressed clips side by side.
//!
//! ```
//! use wgpu_anim::codec::{CompressionSettings, compress};
//! let skeleton = wgpu_anim::mannequin::skeleton();
//! let clip = &wgpu_anim::mannequin::clips(&skeleton)[0];
//! let (compressed, report) = compress(&skeleton, clip, &CompressionSettings::default()).unwrap();
//! assert!(report.max_error_cm <= 0.01 + 1e-9);
//! assert!(report.compressed_bytes < report.raw_bytes);
//! # let _ = compressed;
//! ```

pub mod file;
pub mod format;

use crate::clip::{Clip, JointTrack, Track};
use crate::error::{Channel, Error, Result};
use crate::reference::{ClipSampler, TransformF64};
use crate::skeleton::Skeleton;
use format::{
    Blob, MAX_WIDTH, RANGE_STEPS, SegmentTrack, Writer, rotation_from_stored, segment_range_f64, slerp,
    stored_of_rotation,
};
use glam::{DAffine3, DQuat, DVec3};
use std::time::Instant;

/// Where between two frames the compressor also measures: a quarter of the way, near where nlerp
/// strays most from slerp (between frames they agree) and where a corner cut between frames shows.
pub const BETWEEN: f64 = 0.25;

/// The error a segment's widths are chosen for, as a fraction of the bounds: compensation and
/// the interpolation between frames move the decoded clip a little from what the segment's
/// allocation measured, and the blob's check raises widths by whole chains where it ends over.
const ALLOCATION_TARGET: f64 = 0.95;

/// Most frames of a compressed clip.
pub const MAX_FRAMES: u32 = 1 << 24;

/// How a library stores its clips' animated tracks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClipFormat {
    /// f32 keys as authored, found by a binary search per track.
    Raw,
    /// Compressed with [`CompressionSettings::default`], decoded with random access.
    #[default]
    Compressed,
}

impl ClipFormat {
    /// Both formats.
    pub const ALL: [ClipFormat; 2] = [ClipFormat::Raw, ClipFormat::Compressed];

    /// `raw` or `compressed`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ClipFormat::Raw => "raw",
            ClipFormat::Compressed => "compressed",
        }
    }

    /// The format called `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The builder setting of this format ([`crate::LibraryBuilder::set_compression`]).
    #[must_use]
    pub fn settings(self) -> Option<CompressionSettings> {
        match self {
            ClipFormat::Raw => None,
            ClipFormat::Compressed => Some(CompressionSettings::default()),
        }
    }
}

/// How to compress: accuracy, units and segment size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompressionSettings {
    /// Largest error allowed, in centimetres: how far a point on the shell may move (0.01, ACL's
    /// default).
    pub threshold_cm: f64,
    /// Radius of the shell of virtual points around each joint, in centimetres (3, ACL's default:
    /// about the size of a skinned joint's vertices).
    pub shell_cm: f64,
    /// Centimetres in one unit of the clip's data: 100 for glTF's metres, 5.6444 for the CMU
    /// takes' scaled inches.
    pub unit_cm: f64,
    /// Largest error of any element of a joint's object-space rotation matrix, or of that matrix
    /// times any rotation such as a skin's inverse bind matrix: the length of a row of the
    /// difference, at most the angle of the error in radians (9e-5; 0: no bound, the shell metric
    /// alone, as ACL). The shell metric bounds a joint's rotation error by threshold / shell (3e-3
    /// at the defaults), which moves skinned vertices far from their joint (a body 50 cm from its
    /// spine joint) by more than the threshold; this bound keeps every joint's world and skin
    /// matrices as exact as the glTF conformance fixtures require (1e-4 on every 3×3 element; the
    /// tenth left over is for the f32 decode).
    pub rotation_tolerance: f64,
    /// Largest error of a joint's skin matrix translation (its model matrix times its inverse
    /// bind matrix), as a fraction of the skeleton's size, the largest side of the box around its
    /// joints in the bind pose (1e-4, the glTF conformance fixtures' fraction of the scene's
    /// size; 0: no bound). A skin matrix's translation is where the joint carries the model's
    /// origin, as far from the joint as the joint is from the origin in the bind pose: a point
    /// the shell does not see, moved by the joint's rotation error times that distance.
    pub skin_tolerance: f64,
    /// Frames per segment (16), a power of two (the decoder finds a frame's segment by a shift).
    pub segment_frames: u32,
    /// Frames per second to sample at; `None`: the clip's own key rate (the rate of its closest
    /// keys, rounded to a whole number of hertz, at most 240).
    pub sample_rate: Option<f64>,
}

impl Default for CompressionSettings {
    fn default() -> Self {
        Self {
            threshold_cm: 0.01,
            shell_cm: 3.0,
            unit_cm: 100.0,
            rotation_tolerance: 9e-5,
            skin_tolerance: 1e-4,
            segment_frames: 16,
            sample_rate: None,
        }
    }
}

impl CompressionSettings {
    /// The defaults for data in units of `unit_cm` centimetres.
    #[must_use]
    pub fn with_unit_cm(unit_cm: f64) -> Self {
        Self {
            unit_cm,
            ..Self::default()
        }
    }

    fn check(&self) -> std::result::Result<(), String> {
        for (name, v) in [
            ("threshold", self.threshold_cm),
            ("shell", self.shell_cm),
            ("unit", self.unit_cm),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("compression {name} {v} cm must be finite and positive"));
            }
        }
        for (name, v) in [
            ("rotation tolerance", self.rotation_tolerance),
            ("skin tolerance", self.skin_tolerance),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{name} {v} must be finite and not negative"));
            }
        }
        if !(self.segment_frames.is_power_of_two() && self.segment_frames <= format::MAX_SEGMENT_FRAMES) {
            return Err(format!(
                "{} frames per segment (a power of two, 1 to {})",
                self.segment_frames,
                format::MAX_SEGMENT_FRAMES
            ));
        }
        if let Some(r) = self.sample_rate
            && !(r.is_finite() && r > 0.0 && r <= 10_000.0)
        {
            return Err(format!("sample rate {r} Hz must be finite, positive and at most 10000"));
        }
        Ok(())
    }
}

/// A joint channel stored in a compressed clip's blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedChannel {
    /// The joint, an index into the skeleton's joints.
    pub joint: u32,
    /// Which channel.
    pub channel: Channel,
}

/// A compressed clip in asset form: what [`crate::LibraryBuilder::add_compressed_clip`] checks
/// and adds, and what [`file`] stores.
#[derive(Clone, Debug, PartialEq)]
pub struct CompressedClip {
    /// The clip's name, duration, looping, events and curves, and the joint tracks kept raw:
    /// constants (one key), and the tracks the format could not hold. Channels it lacks hold the
    /// rest pose unless packed.
    pub clip: Clip,
    /// The channels in the blob, its track `k` being `packed[k]`.
    pub packed: Vec<PackedChannel>,
    /// The packed tracks ([`format`]); empty when no track is packed.
    pub blob: Vec<u32>,
}

impl CompressedClip {
    /// The local pose of every joint at clip time `t` (clamped to the clip), decoded in f64: the
    /// raw tracks sampled as [`crate::reference::sample`] does, the packed ones from the blob.
    ///
    /// Errors: a malformed blob or packed channels ([`check_blob`]; a clip from [`compress`] or
    /// [`file::read`] never has one), or a packed joint `skeleton` lacks.
    pub fn sample_f64(&self, skeleton: &Skeleton, t: f64) -> std::result::Result<Vec<TransformF64>, String> {
        Ok(Decoder::new(skeleton, self)?.sample(t))
    }
}

/// Decodes a compressed clip in f64 at many times.
pub struct Decoder<'a> {
    raw: ClipSampler<'a>,
    packed: &'a [PackedChannel],
    blob: Option<Blob<'a>>,
}

impl<'a> Decoder<'a> {
    /// A decoder of `clip` for `skeleton`.
    ///
    /// Errors: as [`CompressedClip::sample_f64`].
    pub fn new(skeleton: &Skeleton, clip: &'a CompressedClip) -> std::result::Result<Self, String> {
        check_blob(clip)?;
        if let Some(p) = clip.packed.iter().find(|p| p.joint as usize >= skeleton.joint_count()) {
            return Err(format!(
                "packs joint {}; skeleton '{}' has {}",
                p.joint,
                skeleton.name(),
                skeleton.joint_count()
            ));
        }
        let blob = if clip.packed.is_empty() {
            None
        } else {
            Some(Blob::parse(&clip.blob)?)
        };
        Ok(Self {
            raw: ClipSampler::new(skeleton, &clip.clip),
            packed: &clip.packed,
            blob,
        })
    }

    /// The local pose of every joint at time `t`.
    #[must_use]
    pub fn sample(&self, t: f64) -> Vec<TransformF64> {
        let mut pose = self.raw.sample(t);
        if let Some(blob) = &self.blob {
            apply_packed(blob, self.packed.iter().map(|p| (p.joint, p.channel)), t, &mut pose);
        }
        pose
    }
}

/// What compressing a clip gave: sizes, accuracy and time.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipReport {
    /// The clip.
    pub clip: String,
    /// Joints of its skeleton.
    pub joints: usize,
    /// Tracks that vary (packed or kept raw).
    pub animated_tracks: usize,
    /// Tracks in the blob.
    pub packed_tracks: usize,
    /// Tracks stripped: constant or at the rest pose within the threshold.
    pub constant_tracks: usize,
    /// Tracks kept raw, as "joint channel: why".
    pub raw_tracks: Vec<String>,
    /// Frames sampled.
    pub samples: u32,
    /// Frames per second.
    pub sample_rate: f64,
    /// Raw size as ACL counts it: 40 bytes per joint per sample.
    pub raw_bytes: usize,
    /// Bytes the clip takes on the GPU: its header, track records, raw keys and blob.
    pub compressed_bytes: usize,
    /// Largest error, cm, over every joint at every frame and a quarter of the way between frames ([`BETWEEN`]).
    pub max_error_cm: f64,
    /// 99th percentile of those errors, cm.
    pub p99_error_cm: f64,
    /// The joint of the largest error.
    pub max_error_joint: String,
    /// The clip time of the largest error, seconds.
    pub max_error_time: f64,
    /// Largest rotation error of a joint in object space, as
    /// [`CompressionSettings::rotation_tolerance`] measures it.
    pub max_rotation_error: f64,
    /// Largest error of a skin matrix's translation, as a fraction of the skeleton's size
    /// ([`CompressionSettings::skin_tolerance`]).
    pub max_skin_error: f64,
    /// Seconds spent compressing.
    pub seconds: f64,
}

impl ClipReport {
    /// `raw_bytes / compressed_bytes`.
    #[must_use]
    pub fn ratio(&self) -> f64 {
        self.raw_bytes as f64 / self.compressed_bytes.max(1) as f64
    }

    /// Compressed bytes per joint per sample.
    #[must_use]
    pub fn bytes_per_joint_sample(&self) -> f64 {
        self.compressed_bytes as f64 / (self.joints.max(1) as f64 * f64::from(self.samples))
    }
}

/// The rate of a clip's closest keys, rounded to whole hertz, 1 to 240 (30 without two keys).
#[must_use]
pub fn key_rate(clip: &Clip) -> f64 {
    let mut min_dt = f64::INFINITY;
    let mut scan = |times: &[f32]| {
        for w in times.windows(2) {
            let dt = f64::from(w[1]) - f64::from(w[0]);
            if dt > 0.0 {
                min_dt = min_dt.min(dt);
            }
        }
    };
    for t in &clip.tracks {
        if let Some(x) = &t.translation {
            scan(&x.times);
        }
        if let Some(x) = &t.rotation {
            scan(&x.times);
        }
        if let Some(x) = &t.scale {
            scan(&x.times);
        }
    }
    if min_dt.is_finite() {
        (1.0 / min_dt).round().clamp(1.0, 240.0)
    } else {
        30.0
    }
}

/// Compresses `clip` for `skeleton`: the clip in asset form and its report.
///
/// Errors: the clip fails [`crate::library::validate_clip`]; settings out of range; more than
/// [`MAX_FRAMES`] frames at the sample rate.
pub fn compress(
    skeleton: &Skeleton,
    clip: &Clip,
    settings: &CompressionSettings,
) -> Result<(CompressedClip, ClipReport)> {
    let started = Instant::now();
    let cerr = |what: String| Error::Clip {
        clip: clip.name.clone(),
        what,
    };
    settings.check().map_err(cerr)?;
    crate::library::validate_clip(skeleton, clip)?;
    // Keys off the frame grid make linear interpolation between frames stray from the clip:
    // try finer grids too, and keep the smallest result.
    let rates: Vec<f64> = match settings.sample_rate {
        Some(r) => vec![r],
        None => {
            let r = key_rate(clip);
            let on_grid = frame_grid(clip, r).is_ok_and(|(_, rate)| keys_on_grid(clip, f64::from(rate)));
            if on_grid {
                vec![r]
            } else {
                [r, 2.0 * r, 4.0 * r]
                    .into_iter()
                    .filter(|&x| x == r || x <= 240.0)
                    .collect()
            }
        }
    };
    let mut best: Option<(CompressedClip, ClipReport)> = None;
    for rate in rates {
        let out = compress_at(skeleton, clip, settings, rate, started)?;
        if best
            .as_ref()
            .is_none_or(|b| out.1.compressed_bytes < b.1.compressed_bytes)
        {
            best = Some(out);
        }
    }
    let (compressed, mut report) = best.expect("at least one rate");
    report.seconds = started.elapsed().as_secs_f64();
    Ok((compressed, report))
}

/// How far (in frames) a key time may be from a frame and still be read as that frame: f32 key
/// times of a long clip round to a few ten-thousandths of a frame.
const ON_FRAME: f64 = 1e-3;

/// The frame (at `rate`) a key time sits on, if it sits on one.
fn frame_of(t: f32, rate: f64) -> Option<f64> {
    let f = f64::from(t) * rate;
    ((f - f.round()).abs() < ON_FRAME).then_some(f.round())
}

/// Every key time of `clip`'s animated channels.
fn key_times(clip: &Clip) -> impl Iterator<Item = f32> + '_ {
    fn animated(x: Option<&Vec<f32>>) -> impl Iterator<Item = f32> + '_ {
        x.filter(|x| x.len() >= 2).into_iter().flatten().copied()
    }
    clip.tracks.iter().flat_map(|t| {
        animated(t.translation.as_ref().map(|x| &x.times))
            .chain(animated(t.rotation.as_ref().map(|x| &x.times)))
            .chain(animated(t.scale.as_ref().map(|x| &x.times)))
    })
}

/// The frame count and rate (as the GPU holds it, f32) that put `frames - 1` on the clip's duration
/// at about `rate` frames per second; when every key is on a frame of that grid, the rate that
/// puts the frames closest to the keys (least squares).
///
/// A long take's keys drift from a grid through their last key by more than their own f32
/// rounding (the CMU take's by up to 4.2e-6 s at 37 s, 1.9e-6 s from the fitted grid), and a
/// joint that turns hundreds of radians a second between two keys (a motion-capture marker swap)
/// turns that much earlier or later between frames than between the keys. The rate the GPU
/// holds is an f32, whose steps move a 37 s take's last frames by 2e-6 s: of the least-squares
/// rate's f32 neighbours and the rate through the last key, the one closest to the keys.
fn frame_grid(clip: &Clip, rate: f64) -> std::result::Result<(u32, f32), String> {
    let frames = (f64::from(clip.duration) * rate).round() + 1.0;
    if frames > f64::from(MAX_FRAMES) {
        return Err(format!(
            "{frames} frames at {rate} Hz; a compressed clip may have {MAX_FRAMES}"
        ));
    }
    let frames = (frames as u32).max(2);
    let through_last = ((f64::from(frames) - 1.0) / f64::from(clip.duration)) as f32;
    let (mut kt, mut kk) = (0.0, 0.0);
    for t in key_times(clip) {
        let Some(k) = frame_of(t, f64::from(through_last)) else {
            return Ok((frames, through_last));
        };
        kt += k * f64::from(t);
        kk += k * k;
    }
    if kt <= 0.0 {
        return Ok((frames, through_last));
    }
    // The least-squares rate as the GPU holds it, or an f32 either side of it (its rounding moves
    // the last frames by up to 1e-6 s at 37 s), whichever puts the keys closest to frames.
    let fitted = (kk / kt) as f32;
    let off_grid = |rate: f32| {
        key_times(clip)
            .map(|t| {
                let f = f64::from(t) * f64::from(rate);
                (f - f.round()).abs() / f64::from(rate)
            })
            .fold(0.0, f64::max)
    };
    let rate = [fitted, fitted.next_down(), fitted.next_up(), through_last]
        .into_iter()
        .filter(|&r| keys_on_grid(clip, f64::from(r)))
        .min_by(|&a, &b| off_grid(a).total_cmp(&off_grid(b)))
        .unwrap_or(through_last);
    Ok((frames, rate))
}

/// Whether every key of `clip` is on a frame at `rate` frames per second.
fn keys_on_grid(clip: &Clip, rate: f64) -> bool {
    key_times(clip).all(|t| frame_of(t, rate).is_some())
}

/// The clip time of every frame: `f / rate`, or the time of a key on frame `f` when there is one.
///
/// Keys a clip stores at 120 Hz sit at f32 times up to a few ten-thousandths of a frame from the
/// grid; read as they are, that rounding would look like motion between frames (a joint that turns
/// fast turns a little earlier or later) that no frame grid can follow. Measured from the keys'
/// own times, the frames are the keys and the lines between them are the clip's.
fn frame_times(clip: &Clip, frames: u32, rate: f64) -> Vec<f64> {
    let mut times: Vec<f64> = (0..frames).map(|f| f64::from(f) / rate).collect();
    for t in key_times(clip) {
        if let Some(f) = frame_of(t, rate).filter(|&f| f >= 0.0 && f < f64::from(frames)) {
            times[f as usize] = f64::from(t);
        }
    }
    times
}

fn compress_at(
    skeleton: &Skeleton,
    clip: &Clip,
    settings: &CompressionSettings,
    rate: f64,
    started: Instant,
) -> Result<(CompressedClip, ClipReport)> {
    let cerr = |what: String| Error::Clip {
        clip: clip.name.clone(),
        what,
    };
    let (frames, rate_f32) = frame_grid(clip, rate).map_err(cerr)?;
    let ctx = Context::new(skeleton, clip, settings, frames, f64::from(rate_f32));
    let mut plan = ctx.plan_channels();
    let (blob, errors) = loop {
        match ctx.allocate(&plan) {
            Ok(out) => break out,
            // A component no width holds: keep its track raw, and allocate again.
            Err(k) => {
                let (joint, channel) = (plan.packed[k].joint, plan.packed[k].channel);
                plan.packed.remove(k);
                plan.raw
                    .push((joint, channel, format!("needs more than {MAX_WIDTH} bits")));
            }
        }
    };
    let compressed = ctx.output(&plan, blob);
    let report = ctx.report(&plan, &compressed, &errors, started.elapsed().as_secs_f64());
    Ok((compressed, report))
}

/// Everything the compressor measures against: the raw clip sampled at every frame and between frames
/// between frames, in f64.
struct Context<'a> {
    skeleton: &'a Skeleton,
    clip: &'a Clip,
    settings: CompressionSettings,
    n: usize,
    frames: u32,
    rate: f64,
    parents: Vec<Option<usize>>,
    /// Per joint: itself and its descendants, parents first.
    subtree: Vec<Vec<usize>>,
    /// Per joint: itself and its ancestors.
    chain: Vec<Vec<usize>>,
    threshold: f64,
    shell: f64,
    /// The rotation bound ([`CompressionSettings::rotation_tolerance`]; infinite: none).
    rotation_tolerance: f64,
    /// Per joint, where its skin matrix's translation is in its own space: its inverse bind
    /// matrix's translation.
    skin_points: Vec<DVec3>,
    /// The skeleton's size (the largest side of its bind pose's box, at least `f64::MIN_POSITIVE`).
    size: f64,
    /// The skin bound in units ([`CompressionSettings::skin_tolerance`] times the size; infinite:
    /// none).
    skin_tolerance: f64,
    /// Raw local poses at every frame (`f · n + j`).
    raw: Vec<TransformF64>,
    /// Raw model matrices at every frame.
    raw_model: Vec<DAffine3>,
    /// Raw local poses a quarter of the way between frames ([`BETWEEN`]) `f` and `f + 1`.
    mid: Vec<TransformF64>,
    /// Raw model matrices between frames.
    mid_model: Vec<DAffine3>,
}

/// A channel's fate.
#[derive(Clone, Debug)]
enum Stripped {
    /// Holds the rest pose (the channel is left out).
    Rest,
    /// Holds one value (a one-key track).
    Constant(DVec3, DQuat),
}

/// Which channels are stripped, packed and kept raw.
#[derive(Clone, Debug, Default)]
struct Plan {
    stripped: Vec<(u32, Channel, Stripped)>,
    packed: Vec<PackedTrack>,
    raw: Vec<(u32, Channel, String)>,
    /// Local poses at every frame with the stripped channels applied (the others raw).
    base: Vec<TransformF64>,
}

/// A packed channel's samples: per frame the three stored values (a rotation's without the
/// component its segment drops).
#[derive(Clone, Debug)]
struct PackedTrack {
    joint: u32,
    channel: Channel,
    values: Vec<DVec3>,
    /// Per segment, the component a rotation drops (3, w, for the other channels).
    dropped: Vec<u32>,
    /// Clip range: min and extent per component (f32, as stored).
    min: [f32; 3],
    extent: [f32; 3],
}

const CHANNELS: [Channel; 3] = [Channel::Translation, Channel::Rotation, Channel::Scale];

fn affine(p: &TransformF64) -> DAffine3 {
    DAffine3::from_scale_rotation_translation(p.scale, p.rotation, p.translation)
}

/// Sets each packed track (`k`-th of `tracks`: its joint and channel) of `pose` to the blob's
/// f64 decode at time `t`.
fn apply_packed(blob: &Blob, tracks: impl Iterator<Item = (u32, Channel)>, t: f64, pose: &mut [TransformF64]) {
    for (k, (joint, channel)) in tracks.enumerate() {
        let (v, q) = blob.sample_f64(k as u32, t, channel == Channel::Rotation);
        let p = &mut pose[joint as usize];
        match channel {
            Channel::Translation => p.translation = v,
            Channel::Rotation => p.rotation = q,
            Channel::Scale => p.scale = v,
        }
    }
}

/// The distance the shell points of a joint move between `a` and `b`: the largest over its three
/// axis points at `shell` from the joint.
fn shell_error(a: &DAffine3, b: &DAffine3, shell: f64) -> f64 {
    let dt = a.translation - b.translation;
    let dm = a.matrix3 - b.matrix3;
    (dm.x_axis * shell + dt)
        .length_squared()
        .max((dm.y_axis * shell + dt).length_squared())
        .max((dm.z_axis * shell + dt).length_squared())
        .sqrt()
}

/// The largest length of a row of the difference of two matrices' 3×3 parts: the largest error of
/// an element of `a`'s 3×3 part times any rotation `r` (row `i` of `(a − b) · r` is row `i` of
/// `a − b` turned by `r`), so it bounds a skin matrix's error as well as the joint's own (for a
/// rotation by a small angle θ it is at most θ).
fn rotation_error(a: &DAffine3, b: &DAffine3) -> f64 {
    let d = (a.matrix3 - b.matrix3).transpose();
    d.x_axis
        .length_squared()
        .max(d.y_axis.length_squared())
        .max(d.z_axis.length_squared())
        .sqrt()
}

fn xyz(p: &TransformF64, c: Channel) -> DVec3 {
    match c {
        Channel::Translation => p.translation,
        Channel::Rotation => {
            let q = if p.rotation.w < 0.0 { -p.rotation } else { p.rotation };
            DVec3::new(q.x, q.y, q.z)
        }
        Channel::Scale => p.scale,
    }
}

/// The component a rotation segment drops: w while it stays at least ½ (restoring it then loses
/// at most a factor √3 of the stored precision), else the one whose smallest magnitude over the
/// segment is largest.
fn dropped_component(rotations: &[DQuat]) -> u32 {
    let smallest = |c: usize| {
        rotations
            .iter()
            .map(|q| q.to_array()[c].abs())
            .fold(f64::INFINITY, f64::min)
    };
    if smallest(3) >= 0.5 {
        return 3;
    }
    (0..4)
        .max_by(|&a, &b| smallest(a).total_cmp(&smallest(b)))
        .expect("four components") as u32
}

fn set(p: &mut TransformF64, c: Channel, v: DVec3) {
    match c {
        Channel::Translation => p.translation = v,
        Channel::Rotation => p.rotation = rotation_from_stored(v, 3),
        Channel::Scale => p.scale = v,
    }
}

/// The model matrices of one frame's local poses.
fn models(parents: &[Option<usize>], local: &[TransformF64], out: &mut [DAffine3]) {
    for (i, l) in local.iter().enumerate() {
        let m = affine(l);
        out[i] = match parents[i] {
            Some(p) => out[p] * m,
            None => m,
        };
    }
}

/// A component quantized to `width` bits in a segment range (lo, ex): (q, decoded value).
fn quantize(v: f64, lo: f64, ex: f64, width: u32) -> (u32, f64) {
    if width == 0 {
        return (0, lo + ex * 0.5);
    }
    let top = f64::from((1u32 << width) - 1);
    let x = if ex > 0.0 { ((v - lo) / ex).clamp(0.0, 1.0) } else { 0.0 };
    let q = (x * top).round();
    (q as u32, lo + ex * (q / top))
}

/// One segment's state during bit allocation.
struct Segment<'c, 'a> {
    ctx: &'c Context<'a>,
    first: usize,
    rows: usize,
    /// Local poses of the segment's frames (`row · n + j`).
    local: Vec<TransformF64>,
    model: Vec<DAffine3>,
    /// Per packed track: segment range (m, e) per component and the decoded (lo, ex).
    ranges: Vec<[(u32, u32, f64, f64); 3]>,
    /// Per packed track, per row: the stored values to quantize. A rotation's are compensated:
    /// the reference's object-space rotation under its decoded parent, so that its error is its
    /// own quantization's and not its ancestors' too ([`Segment::compensate`]).
    values: Vec<Vec<DVec3>>,
    /// Per joint: whether its rotation is packed (and so compensated).
    compensated: Vec<bool>,
}

impl Context<'_> {
    fn new<'a>(
        skeleton: &'a Skeleton,
        clip: &'a Clip,
        settings: &CompressionSettings,
        frames: u32,
        rate: f64,
    ) -> Context<'a> {
        let n = skeleton.joint_count();
        let parents: Vec<Option<usize>> = skeleton.parents().iter().map(|p| p.map(|p| p as usize)).collect();
        let mut subtree: Vec<Vec<usize>> = (0..n).map(|j| vec![j]).collect();
        let mut chain: Vec<Vec<usize>> = Vec::with_capacity(n);
        for j in 0..n {
            let mut c = vec![j];
            let mut p = parents[j];
            while let Some(a) = p {
                c.push(a);
                subtree[a].push(j);
                p = parents[a];
            }
            chain.push(c);
        }
        let sampler = ClipSampler::new(skeleton, clip);
        let sample_all = |times: &mut dyn Iterator<Item = f64>| {
            let mut local = Vec::new();
            let mut model = Vec::new();
            let mut m = vec![DAffine3::IDENTITY; n];
            for t in times {
                let pose = sampler.sample(t);
                models(&parents, &pose, &mut m);
                local.extend(pose);
                model.extend_from_slice(&m);
            }
            (local, model)
        };
        let binds = skeleton.inverse_binds();
        let skin_points: Vec<DVec3> = binds.iter().map(|b| b.w_axis.truncate().as_dvec3()).collect();
        let (lo, hi) = binds
            .iter()
            .map(|b| b.as_dmat4().inverse().w_axis.truncate())
            .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(p), hi.max(p))
            });
        let size = (hi - lo).max_element().max(f64::MIN_POSITIVE);
        let times = frame_times(clip, frames, rate);
        let (raw, raw_model) = sample_all(&mut times.iter().copied());
        let (mid, mid_model) = sample_all(&mut times.windows(2).map(|w| w[0] + BETWEEN * (w[1] - w[0])));
        Context {
            skeleton,
            clip,
            settings: *settings,
            n,
            frames,
            rate,
            parents,
            subtree,
            chain,
            threshold: settings.threshold_cm / settings.unit_cm,
            shell: settings.shell_cm / settings.unit_cm,
            rotation_tolerance: if settings.rotation_tolerance > 0.0 {
                settings.rotation_tolerance
            } else {
                f64::INFINITY
            },
            skin_points,
            size,
            skin_tolerance: if settings.skin_tolerance > 0.0 && size > f64::MIN_POSITIVE {
                settings.skin_tolerance * size
            } else {
                f64::INFINITY
            },
            raw,
            raw_model,
            mid,
            mid_model,
        }
    }

    /// Joint `j`'s error against the three bounds, as a fraction of them (within: at most 1).
    fn error(&self, j: usize, reference: &DAffine3, got: &DAffine3) -> f64 {
        (shell_error(reference, got, self.shell) / self.threshold)
            .max(rotation_error(reference, got) / self.rotation_tolerance)
            .max(self.skin_error(j, reference, got) / self.skin_tolerance)
    }

    /// How far joint `j`'s skin matrix's translation is from the reference's, in units.
    fn skin_error(&self, j: usize, reference: &DAffine3, got: &DAffine3) -> f64 {
        let p = self.skin_points[j];
        reference.transform_point3(p).distance(got.transform_point3(p))
    }

    /// The largest error ([`Context::error`]) over joint `j`'s subtree at the poses `local` (`row · n + j'`, rows
    /// matching `reference`), with joint `j`'s pose replaced by `pose(row)`.
    fn subtree_error(
        &self,
        local: &[TransformF64],
        model: &[DAffine3],
        reference: &[DAffine3],
        j: usize,
        pose: &dyn Fn(usize) -> TransformF64,
    ) -> f64 {
        let n = self.n;
        let mut worst: f64 = 0.0;
        let mut m = vec![DAffine3::IDENTITY; n];
        for row in 0..local.len() / n {
            let base = row * n;
            m.copy_from_slice(&model[base..base + n]);
            let pj = affine(&pose(row));
            m[j] = match self.parents[j] {
                Some(p) => m[p] * pj,
                None => pj,
            };
            for &i in &self.subtree[j][1..] {
                let p = self.parents[i].expect("a descendant has a parent");
                m[i] = m[p] * affine(&local[base + i]);
            }
            for &i in &self.subtree[j] {
                worst = worst.max(self.error(i, &reference[base + i], &m[i]));
            }
        }
        worst
    }

    /// Decides each channel: stripped (rest or constant), packed, or raw.
    fn plan_channels(&self) -> Plan {
        let n = self.n;
        let mut plan = Plan {
            base: self.raw.clone(),
            ..Plan::default()
        };
        let mut model = self.raw_model.clone();
        // Stripping may take a tenth of the error allowed, interpolation between frames 90 %
        // (with keys on the frames it takes none, but f32 key times stray a little), the rest is
        // quantization's.
        let strip_budget = 0.1;
        let sampling_budget = 0.9;
        let rest = self.skeleton.rest_pose();
        let mut by_joint: Vec<&JointTrack> = self.clip.tracks.iter().collect();
        by_joint.sort_by_key(|t| self.skeleton.joint_index(&t.joint));
        for jt in by_joint {
            let j = self.skeleton.joint_index(&jt.joint).expect("a validated clip");
            for c in CHANNELS {
                if !jt.has(c) {
                    continue;
                }
                let values: Vec<DVec3> = (0..self.frames as usize)
                    .map(|f| xyz(&plan.base[f * n + j], c))
                    .collect();
                // Stripped: at the rest pose, or at the middle of its range.
                let r = &rest[j];
                let rest_value = TransformF64 {
                    translation: r.translation.as_dvec3(),
                    rotation: r.rotation.as_dquat().normalize(),
                    scale: r.scale.as_dvec3(),
                };
                let (lo, hi) = values.iter().fold(
                    (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
                    |(lo, hi), v| (lo.min(*v), hi.max(*v)),
                );
                let mut middle = rest_value;
                set(&mut middle, c, (lo + hi) * 0.5);
                // As stored: a one-key f32 track (the rotation normalized when sampled).
                middle.translation = middle.translation.as_vec3().as_dvec3();
                middle.rotation = middle.rotation.as_quat().as_dquat().normalize();
                middle.scale = middle.scale.as_vec3().as_dvec3();
                let mut done = false;
                for (option, candidate) in [(true, rest_value), (false, middle)] {
                    let pose = |row: usize| {
                        let mut p = plan.base[row * n + j];
                        match c {
                            Channel::Translation => p.translation = candidate.translation,
                            Channel::Rotation => p.rotation = candidate.rotation,
                            Channel::Scale => p.scale = candidate.scale,
                        }
                        p
                    };
                    if self.subtree_error(&plan.base, &model, &self.raw_model, j, &pose) <= strip_budget {
                        let poses: Vec<TransformF64> = (0..self.frames as usize).map(pose).collect();
                        for (f, p) in poses.into_iter().enumerate() {
                            plan.base[f * n + j] = p;
                        }
                        for f in 0..self.frames as usize {
                            models(
                                &self.parents,
                                &plan.base[f * n..(f + 1) * n],
                                &mut model[f * n..(f + 1) * n],
                            );
                        }
                        let s = match (option, c) {
                            (true, _) => Stripped::Rest,
                            (false, Channel::Rotation) => Stripped::Constant(DVec3::ZERO, candidate.rotation),
                            (false, Channel::Translation) => Stripped::Constant(candidate.translation, DQuat::IDENTITY),
                            (false, Channel::Scale) => Stripped::Constant(candidate.scale, DQuat::IDENTITY),
                        };
                        plan.stripped.push((j as u32, c, s));
                        done = true;
                        break;
                    }
                }
                if done {
                    continue;
                }
                // Kept raw when linear interpolation between frames strays from it.
                let pose = |row: usize| {
                    let mut p = self.mid[row * n + j];
                    let (a, b) = (values[row], values[row + 1]);
                    match c {
                        Channel::Rotation => {
                            let (qa, qb) = (plan.base[row * n + j].rotation, plan.base[(row + 1) * n + j].rotation);
                            p.rotation = slerp(qa, qb, BETWEEN);
                        }
                        _ => set(&mut p, c, a.lerp(b, BETWEEN)),
                    }
                    p
                };
                let sampling = self.subtree_error(&self.mid, &self.mid_model, &self.mid_model, j, &pose);
                if sampling > sampling_budget {
                    plan.raw.push((
                        j as u32,
                        c,
                        format!("between frames it strays {sampling:.2} times the error allowed from a line"),
                    ));
                    continue;
                }
                let (values, dropped, lo, hi) = if c == Channel::Rotation {
                    let rotations: Vec<DQuat> = (0..self.frames as usize)
                        .map(|f| plan.base[f * n + j].rotation)
                        .collect();
                    let s_frames = self.settings.segment_frames as usize;
                    let dropped: Vec<u32> = rotations.chunks(s_frames).map(dropped_component).collect();
                    let values: Vec<DVec3> = rotations
                        .iter()
                        .enumerate()
                        .map(|(f, q)| stored_of_rotation(*q, dropped[f / s_frames]))
                        .collect();
                    let (lo, hi) = values.iter().fold(
                        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
                        |(lo, hi), v| (lo.min(*v), hi.max(*v)),
                    );
                    // Room for compensation ([`Segment::compensate`]) to move a value past the
                    // reference's range by an ancestor's error (a hinge's constant 0 becomes a
                    // little off 0); at coarse bounds no more than a hundredth.
                    let room = DVec3::splat((2.0 * self.rotation_tolerance.min(self.threshold / self.shell)).min(1e-2));
                    (values, dropped, lo - room, hi + room)
                } else {
                    (
                        values,
                        vec![3; (self.frames as usize).div_ceil(self.settings.segment_frames as usize)],
                        lo,
                        hi,
                    )
                };
                let mut min = [0.0f32; 3];
                let mut extent = [0.0f32; 3];
                for k in 0..3 {
                    // f32 bounds that contain every value.
                    let mut m = lo[k] as f32;
                    if f64::from(m) > lo[k] {
                        m = m.next_down();
                    }
                    let mut e = (hi[k] - f64::from(m)) as f32;
                    if f64::from(m) + f64::from(e) < hi[k] {
                        e = e.next_up();
                    }
                    min[k] = m;
                    extent[k] = e;
                }
                plan.packed.push(PackedTrack {
                    joint: j as u32,
                    channel: c,
                    values,
                    dropped,
                    min,
                    extent,
                });
            }
        }
        plan
    }

    /// Chooses every segment's widths and writes the blob; the errors at every frame and
    /// between frames. `Err(k)`: packed track `k` has a component no width holds.
    fn allocate(&self, plan: &Plan) -> std::result::Result<(Vec<u32>, Errors), usize> {
        if plan.packed.is_empty() {
            let errors = self.measure(plan, None);
            return Ok((Vec::new(), errors));
        }
        let s_frames = self.settings.segment_frames as usize;
        let segment_count = (self.frames as usize).div_ceil(s_frames);
        let mut widths: Vec<Vec<[u32; 3]>> = Vec::with_capacity(segment_count);
        let mut values: Vec<Vec<Vec<DVec3>>> = Vec::with_capacity(segment_count);
        for s in 0..segment_count {
            let mut seg = Segment::new(
                self,
                plan,
                s * s_frames,
                s_frames.min(self.frames as usize - s * s_frames),
            );
            widths.push(seg.allocate(plan)?);
            values.push(seg.values);
        }
        // Verify the blob as decoded, a quarter of the way between frames ([`BETWEEN`]) included; raise the widths of
        // the segments where a joint is over the threshold along its chain, until none is.
        for _ in 0..8 {
            let blob = self.write(plan, &widths, &values);
            let errors = self.measure(plan, Some(&blob));
            if errors.over.is_empty() {
                return Ok((blob, errors));
            }
            // Each segment's tracks on an over joint's chain go up one bit, once a round.
            let mut raise = vec![vec![false; plan.packed.len()]; segment_count];
            for &(f, j) in &errors.over {
                for s in [f / s_frames, (f + 1).min(self.frames as usize - 1) / s_frames] {
                    for (k, t) in plan.packed.iter().enumerate() {
                        raise[s][k] |= self.chain[j].contains(&(t.joint as usize));
                    }
                }
            }
            for (widths, raise) in widths.iter_mut().zip(&raise) {
                for (w, _) in widths.iter_mut().zip(raise).filter(|(_, r)| **r) {
                    *w = w.map(|w| (w + 1).min(MAX_WIDTH));
                }
            }
            let raised: Vec<bool> = raise.iter().map(|r| r.contains(&true)).collect();
            // The raised parents decode differently: compensate their children again.
            for s in (0..segment_count).filter(|&s| raised[s]) {
                let mut seg = Segment::new(
                    self,
                    plan,
                    s * s_frames,
                    s_frames.min(self.frames as usize - s * s_frames),
                );
                for (k, t) in plan.packed.iter().enumerate() {
                    seg.commit(t, k, widths[s][k]);
                }
                seg.compensate(plan, &widths[s], None);
                values[s] = seg.values;
            }
        }
        let blob = self.write(plan, &widths, &values);
        let errors = self.measure(plan, Some(&blob));
        Ok((blob, errors))
    }

    /// The blob of these widths and stored values (per segment, per packed track, per row).
    fn write(&self, plan: &Plan, widths: &[Vec<[u32; 3]>], values: &[Vec<Vec<DVec3>>]) -> Vec<u32> {
        let s_frames = self.settings.segment_frames as usize;
        let writer = Writer {
            frame_count: self.frames,
            rate: self.rate as f32,
            segment_frames: self.settings.segment_frames,
            ranges: plan
                .packed
                .iter()
                .map(|t| [t.min[0], t.min[1], t.min[2], t.extent[0], t.extent[1], t.extent[2]])
                .collect(),
        };
        let segments: Vec<Vec<SegmentTrack>> = widths
            .iter()
            .enumerate()
            .map(|(s, w)| {
                let first = s * s_frames;
                let rows = s_frames.min(self.frames as usize - first);
                plan.packed
                    .iter()
                    .zip(w)
                    .zip(&values[s])
                    .map(|((t, &widths), v)| {
                        let ranges = segment_ranges(t, v);
                        SegmentTrack {
                            widths,
                            dropped: t.dropped[s],
                            min: ranges.map(|r| r.0),
                            extent: ranges.map(|r| r.1),
                            q: v[..rows]
                                .iter()
                                .map(|x| std::array::from_fn(|c| quantize(x[c], ranges[c].2, ranges[c].3, widths[c]).0))
                                .collect(),
                        }
                    })
                    .collect()
            })
            .collect();
        writer.write(&segments)
    }

    /// Errors of the decoded clip (the plan's base with the blob's tracks) at every frame and
    /// a quarter of the way between frames ([`BETWEEN`]).
    fn measure(&self, plan: &Plan, blob: Option<&[u32]>) -> Errors {
        let n = self.n;
        let blob = blob.map(|b| Blob::parse(b).expect("the compressor's own blob"));
        let mut errors = Errors::default();
        let mut m = vec![DAffine3::IDENTITY; n];
        let frames = self.frames as usize;
        for step in 0..2 * frames - 1 {
            let (f, half) = (step / 2, step % 2 == 1);
            let t = (f as f64 + if half { BETWEEN } else { 0.0 }) / self.rate;
            let mut pose: Vec<TransformF64> = if half {
                // Stripped channels hold their value; the others raw.
                let mut p = self.mid[f * n..(f + 1) * n].to_vec();
                for &(j, c, _) in &plan.stripped {
                    let from = &plan.base[f * n + j as usize];
                    match c {
                        Channel::Translation => p[j as usize].translation = from.translation,
                        Channel::Rotation => p[j as usize].rotation = from.rotation,
                        Channel::Scale => p[j as usize].scale = from.scale,
                    }
                }
                p
            } else {
                plan.base[f * n..(f + 1) * n].to_vec()
            };
            if let Some(blob) = &blob {
                apply_packed(blob, plan.packed.iter().map(|tr| (tr.joint, tr.channel)), t, &mut pose);
            }
            models(&self.parents, &pose, &mut m);
            let reference = if half {
                &self.mid_model[f * n..(f + 1) * n]
            } else {
                &self.raw_model[f * n..(f + 1) * n]
            };
            for j in 0..n {
                let e = shell_error(&reference[j], &m[j], self.shell);
                errors.all.push(e);
                if e > errors.max {
                    errors.max = e;
                    errors.max_joint = j;
                    errors.max_time = t;
                }
                errors.max_rotation = errors.max_rotation.max(rotation_error(&reference[j], &m[j]));
                errors.max_skin = errors
                    .max_skin
                    .max(self.skin_error(j, &reference[j], &m[j]) / self.size);
                if self.error(j, &reference[j], &m[j]) > 1.0 {
                    errors.over.push((f, j));
                }
            }
        }
        errors
    }

    fn output(&self, plan: &Plan, blob: Vec<u32>) -> CompressedClip {
        let names = self.skeleton.joint_names();
        let mut tracks: Vec<JointTrack> = Vec::new();
        fn track_of(tracks: &mut Vec<JointTrack>, names: &[String], j: u32) -> usize {
            let name = &names[j as usize];
            if let Some(k) = tracks.iter().position(|t| t.joint == *name) {
                return k;
            }
            tracks.push(JointTrack {
                joint: name.clone(),
                ..JointTrack::default()
            });
            tracks.len() - 1
        }
        for (j, c, s) in &plan.stripped {
            let Stripped::Constant(v, q) = s else {
                continue;
            };
            let k = track_of(&mut tracks, names, *j);
            match c {
                Channel::Translation => tracks[k].translation = Some(Track::constant(v.as_vec3())),
                Channel::Rotation => tracks[k].rotation = Some(Track::constant(q.as_quat())),
                Channel::Scale => tracks[k].scale = Some(Track::constant(v.as_vec3())),
            }
        }
        for (j, c, _) in &plan.raw {
            let source = self
                .clip
                .tracks
                .iter()
                .find(|t| self.skeleton.joint_index(&t.joint) == Some(*j as usize))
                .expect("a raw channel comes from a track");
            let k = track_of(&mut tracks, names, *j);
            match c {
                Channel::Translation => tracks[k].translation.clone_from(&source.translation),
                Channel::Rotation => tracks[k].rotation.clone_from(&source.rotation),
                Channel::Scale => tracks[k].scale.clone_from(&source.scale),
            }
        }
        tracks.sort_by_key(|t| self.skeleton.joint_index(&t.joint));
        CompressedClip {
            clip: Clip {
                tracks,
                ..self.clip.clone()
            },
            packed: plan
                .packed
                .iter()
                .map(|t| PackedChannel {
                    joint: t.joint,
                    channel: t.channel,
                })
                .collect(),
            blob,
        }
    }

    fn report(&self, plan: &Plan, compressed: &CompressedClip, errors: &Errors, seconds: f64) -> ClipReport {
        let names = self.skeleton.joint_names();
        let mut sorted = errors.all.clone();
        sorted.sort_by(f64::total_cmp);
        let p99 = sorted
            .get(((sorted.len() as f64 * 0.99).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0.0);
        let unit = self.settings.unit_cm;
        ClipReport {
            clip: self.clip.name.clone(),
            joints: self.n,
            animated_tracks: plan.packed.len() + plan.raw.len(),
            packed_tracks: plan.packed.len(),
            constant_tracks: plan.stripped.len(),
            raw_tracks: plan
                .raw
                .iter()
                .map(|(j, c, why)| format!("{} {c}: {why}", names[*j as usize]))
                .collect(),
            samples: self.frames,
            sample_rate: self.rate,
            raw_bytes: 40 * self.n * self.frames as usize,
            compressed_bytes: gpu_bytes(self.n, compressed),
            max_error_cm: errors.max * unit,
            p99_error_cm: p99 * unit,
            max_error_joint: names[errors.max_joint].clone(),
            max_error_time: errors.max_time,
            max_rotation_error: errors.max_rotation,
            max_skin_error: errors.max_skin,
            seconds,
        }
    }
}

/// Bytes a compressed clip of a skeleton of `joints` joints takes on the GPU: its clip record,
/// three track records per joint, its raw keys (a time and a 16-byte value each) and its blob.
#[must_use]
pub fn gpu_bytes(joints: usize, clip: &CompressedClip) -> usize {
    let mut keys = 0;
    for t in &clip.clip.tracks {
        let count = |n_times: usize, n_values: usize| 4 * n_times + 16 * n_values;
        if let Some(x) = &t.translation {
            keys += count(x.times.len(), x.values.len());
        }
        if let Some(x) = &t.rotation {
            keys += count(x.times.len(), x.values.len());
        }
        if let Some(x) = &t.scale {
            keys += count(x.times.len(), x.values.len());
        }
    }
    size_of::<crate::layout::GpuClip>() + 3 * joints * size_of::<crate::layout::GpuTrack>() + keys + 4 * clip.blob.len()
}

/// A packed track's segment range over a segment's `values`: per component (m, e, lo, ex).
fn segment_ranges(t: &PackedTrack, values: &[DVec3]) -> [(u32, u32, f64, f64); 3] {
    std::array::from_fn(|c| {
        let (min, extent) = (f64::from(t.min[c]), f64::from(t.extent[c]));
        let (m, e) = if extent > 0.0 {
            let steps = f64::from(RANGE_STEPS);
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for v in values {
                let x = (v[c] - min) / extent;
                lo = lo.min(x);
                hi = hi.max(x);
            }
            let m = (lo * steps).floor().clamp(0.0, steps) as u32;
            let top = (hi * steps).ceil().clamp(0.0, steps) as u32;
            (m, top.saturating_sub(m))
        } else {
            (0, 0)
        };
        let (lo, ex) = segment_range_f64(min, extent, m, e);
        (m, e, lo, ex)
    })
}

/// Errors of a decoded clip.
#[derive(Default)]
struct Errors {
    /// Every joint's error at every frame and a quarter of the way between frames ([`BETWEEN`]).
    all: Vec<f64>,
    max: f64,
    max_joint: usize,
    max_time: f64,
    /// Largest rotation error ([`rotation_error`]).
    max_rotation: f64,
    /// Largest skin error ([`Context::skin_error`]), as a fraction of the skeleton's size.
    max_skin: f64,
    /// (frame, joint) over the threshold.
    over: Vec<(usize, usize)>,
}

impl<'c, 'a> Segment<'c, 'a> {
    fn new(ctx: &'c Context<'a>, plan: &Plan, first: usize, rows: usize) -> Self {
        let n = ctx.n;
        let local = plan.base[first * n..(first + rows) * n].to_vec();
        let mut model = vec![DAffine3::IDENTITY; rows * n];
        for r in 0..rows {
            models(&ctx.parents, &local[r * n..(r + 1) * n], &mut model[r * n..(r + 1) * n]);
        }
        let values: Vec<Vec<DVec3>> = plan
            .packed
            .iter()
            .map(|t| t.values[first..first + rows].to_vec())
            .collect();
        let ranges = plan
            .packed
            .iter()
            .zip(&values)
            .map(|(t, v)| segment_ranges(t, v))
            .collect();
        let mut compensated = vec![false; n];
        for t in &plan.packed {
            if t.channel == Channel::Rotation {
                compensated[t.joint as usize] = true;
            }
        }
        Self {
            ctx,
            first,
            rows,
            local,
            model,
            ranges,
            values,
            compensated,
        }
    }

    /// Recomputes the stored values of the packed rotations below joint `root` (every one when
    /// `None`), parents first, as the reference's object-space rotation under the parent as
    /// decoded: local = decoded parent⁻¹ · reference parent · reference local. Each is quantized
    /// again at its widths before its children read it.
    fn compensate(&mut self, plan: &Plan, widths: &[[u32; 3]], root: Option<usize>) {
        let n = self.ctx.n;
        let s = self.first / self.ctx.settings.segment_frames as usize;
        for (k, t) in plan.packed.iter().enumerate() {
            let j = t.joint as usize;
            if t.channel != Channel::Rotation || root.is_some_and(|a| a == j || !self.ctx.subtree[a].contains(&j)) {
                continue;
            }
            let Some(p) = self.ctx.parents[j] else {
                continue;
            };
            for r in 0..self.rows {
                let (_, decoded, _) = self.model[r * n + p].to_scale_rotation_translation();
                let (_, reference, _) = self.ctx.raw_model[(self.first + r) * n + p].to_scale_rotation_translation();
                let local = plan.base[(self.first + r) * n + j].rotation;
                let target = (decoded.inverse() * reference * local).normalize();
                self.values[k][r] = stored_of_rotation(target, t.dropped[s]);
            }
            self.ranges[k] = segment_ranges(t, &self.values[k]);
            self.commit(t, k, widths[k]);
        }
    }

    /// Joint `j`'s model matrix at row `r` when joint `changed`'s model matrix becomes `m` and
    /// the packed rotations between them keep their object-space rotation (compensated), the
    /// others their local pose.
    fn model_below(&self, r: usize, changed: usize, m: DAffine3, j: usize) -> DAffine3 {
        let n = self.ctx.n;
        let mut model = m;
        for &a in self.ctx.chain[j].iter().rev().skip_while(|&&a| a != changed).skip(1) {
            let local = &self.local[r * n + a];
            model = if self.compensated[a] {
                let mut kept = self.model[r * n + a];
                kept.translation = model.transform_point3(local.translation);
                kept
            } else {
                model * affine(local)
            };
        }
        model
    }

    /// Packed track `k` at row `r` with these widths (`None`: exact).
    fn decoded(&self, k: usize, r: usize, widths: [Option<u32>; 3]) -> DVec3 {
        let v = self.values[k][r];
        DVec3::from_array(std::array::from_fn(|c| match widths[c] {
            None => v[c],
            Some(w) => quantize(v[c], self.ranges[k][c].2, self.ranges[k][c].3, w).1,
        }))
    }

    fn pose(&self, t: &PackedTrack, k: usize, r: usize, widths: [Option<u32>; 3]) -> TransformF64 {
        let mut p = self.local[r * self.ctx.n + t.joint as usize];
        let v = self.decoded(k, r, widths);
        match t.channel {
            Channel::Rotation => {
                let s = self.first / self.ctx.settings.segment_frames as usize;
                p.rotation = rotation_from_stored(v, t.dropped[s]);
            }
            c => set(&mut p, c, v),
        }
        p
    }

    /// Track `k`'s joint's model matrix at row `r` with these widths.
    fn model_with(&self, t: &PackedTrack, k: usize, r: usize, widths: [Option<u32>; 3]) -> DAffine3 {
        let j = t.joint as usize;
        let m = affine(&self.pose(t, k, r, widths));
        match self.ctx.parents[j] {
            Some(p) => self.model[r * self.ctx.n + p] * m,
            None => m,
        }
    }

    /// The largest error over track `k`'s joint's subtree with these widths, the packed
    /// rotations below compensated ([`Segment::model_below`]).
    fn error(&self, t: &PackedTrack, k: usize, widths: [Option<u32>; 3]) -> f64 {
        let n = self.ctx.n;
        let j = t.joint as usize;
        let mut worst: f64 = 0.0;
        for r in 0..self.rows {
            let m = self.model_with(t, k, r, widths);
            for &i in &self.ctx.subtree[j] {
                let got = self.model_below(r, j, m, i);
                worst = worst.max(self.ctx.error(i, &self.ctx.raw_model[(self.first + r) * n + i], &got));
            }
        }
        worst
    }

    /// Joint `j`'s error with track `k` (on its chain) at these widths, the packed rotations
    /// between them compensated.
    fn joint_error(&self, j: usize, t: &PackedTrack, k: usize, widths: [u32; 3]) -> f64 {
        let n = self.ctx.n;
        let mut worst: f64 = 0.0;
        for r in 0..self.rows {
            let m = self.model_with(t, k, r, widths.map(Some));
            let got = self.model_below(r, t.joint as usize, m, j);
            worst = worst.max(self.ctx.error(j, &self.ctx.raw_model[(self.first + r) * n + j], &got));
        }
        worst
    }

    /// Sets track `k` to these widths.
    fn commit(&mut self, t: &PackedTrack, k: usize, widths: [u32; 3]) {
        let n = self.ctx.n;
        for r in 0..self.rows {
            let p = self.pose(t, k, r, widths.map(Some));
            self.local[r * n + t.joint as usize] = p;
            models(
                &self.ctx.parents,
                &self.local[r * n..(r + 1) * n],
                &mut self.model[r * n..(r + 1) * n],
            );
        }
    }

    fn joint_errors(&self) -> Vec<f64> {
        let n = self.ctx.n;
        let mut e = vec![0.0f64; n];
        for r in 0..self.rows {
            for (j, e) in e.iter_mut().enumerate() {
                let i = (self.first + r) * n + j;
                *e = e.max(self.ctx.error(j, &self.ctx.raw_model[i], &self.model[r * n + j]));
            }
        }
        e
    }

    fn allocate(&mut self, plan: &Plan) -> std::result::Result<Vec<[u32; 3]>, usize> {
        let threshold = ALLOCATION_TARGET;
        // 1. The least width of each component alone, the rest exact.
        let mut widths: Vec<[u32; 3]> = Vec::with_capacity(plan.packed.len());
        for (k, t) in plan.packed.iter().enumerate() {
            let mut w = [0u32; 3];
            for c in 0..3 {
                let with = |b: u32| {
                    let mut ws = [None; 3];
                    ws[c] = Some(b);
                    self.error(t, k, ws)
                };
                if with(MAX_WIDTH) > threshold {
                    return Err(k);
                }
                let (mut lo, mut hi) = (0, MAX_WIDTH);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if with(mid) <= threshold {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                w[c] = lo;
            }
            widths.push(w);
        }
        // 2. All together, the rotations compensated: raise the worst joint's chain until every
        // joint is within.
        for (k, t) in plan.packed.iter().enumerate() {
            self.commit(t, k, widths[k]);
        }
        self.compensate(plan, &widths, None);
        self.raise_worst(plan, &mut widths);
        // 3. Lower each component while every joint stays within, widest first.
        let mut order: Vec<(usize, usize)> = (0..plan.packed.len())
            .flat_map(|k| (0..3).map(move |c| (k, c)))
            .collect();
        for _ in 0..3 {
            order.sort_by_key(|&(k, c)| std::cmp::Reverse(widths[k][c]));
            let mut changed = false;
            for &(k, c) in &order {
                if widths[k][c] == 0 {
                    continue;
                }
                let mut w = widths[k][c];
                while w > 0 {
                    let mut trial = widths[k];
                    trial[c] = w - 1;
                    if self.error(&plan.packed[k], k, trial.map(Some)) > threshold {
                        break;
                    }
                    w -= 1;
                }
                if w != widths[k][c] {
                    widths[k][c] = w;
                    self.commit(&plan.packed[k], k, widths[k]);
                    self.compensate(plan, &widths, Some(plan.packed[k].joint as usize));
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // 4. Compensation moved the rotations below each lowered one: raise again where that
        // took a joint over.
        self.raise_worst(plan, &mut widths);
        Ok(widths)
    }

    /// Raises, one component at a time, the widths along the worst joint's chain until every
    /// joint is within the bounds (or no width is left to raise).
    fn raise_worst(&mut self, plan: &Plan, widths: &mut [[u32; 3]]) {
        // Joints no single extra bit helps (an ancestor's error its compensation cannot follow):
        // left to the blob's check, which raises whole chains.
        let mut stuck = vec![false; self.ctx.n];
        for _ in 0..3 * MAX_WIDTH as usize * plan.packed.len() + self.ctx.n {
            let errors = self.joint_errors();
            let (worst, e) = errors
                .iter()
                .enumerate()
                .filter(|&(j, _)| !stuck[j])
                .fold((0, 0.0f64), |a, (j, &e)| if e > a.1 { (j, e) } else { a });
            if e <= ALLOCATION_TARGET {
                break;
            }
            // The one component along its chain whose extra bit helps it most.
            let mut best: Option<(usize, [u32; 3], f64)> = None;
            for (k, t) in plan.packed.iter().enumerate() {
                if !self.ctx.chain[worst].contains(&(t.joint as usize)) {
                    continue;
                }
                for c in 0..3 {
                    if widths[k][c] == MAX_WIDTH || t.extent[c] == 0.0 {
                        continue;
                    }
                    let mut trial = widths[k];
                    trial[c] += 1;
                    let e = self.joint_error(worst, t, k, trial);
                    if best.is_none_or(|b| e < b.2) {
                        best = Some((k, trial, e));
                    }
                }
            }
            match best {
                Some((k, trial, predicted)) if predicted < e => {
                    widths[k] = trial;
                    self.commit(&plan.packed[k], k, trial);
                    self.compensate(plan, widths, Some(plan.packed[k].joint as usize));
                }
                _ => stuck[worst] = true,
            }
        }
    }
}

/// Checks a compressed clip's blob and packed channels on their own (the builder checks them
/// against the skeleton): the blob well formed, one blob track per packed channel, no channel
/// packed twice, frames that span the clip's duration.
///
/// Errors: what is wrong.
pub fn check_blob(clip: &CompressedClip) -> std::result::Result<(), String> {
    if clip.packed.is_empty() {
        if !clip.blob.is_empty() {
            return Err(format!("a blob of {} words but no packed channel", clip.blob.len()));
        }
        return Ok(());
    }
    let blob = Blob::parse(&clip.blob).map_err(|e| format!("packed tracks: {e}"))?;
    let h = blob.header();
    if h.tracks as usize != clip.packed.len() {
        return Err(format!(
            "{} packed channels but {} tracks in the blob",
            clip.packed.len(),
            h.tracks
        ));
    }
    for (k, p) in clip.packed.iter().enumerate() {
        if clip.packed[..k].contains(p) {
            return Err(format!("joint {} {} is packed twice", p.joint, p.channel));
        }
    }
    let span = (f64::from(h.frame_count) - 1.0) / f64::from(h.rate);
    let duration = f64::from(clip.clip.duration);
    if (span - duration).abs() > 1e-3 * duration.max(1e-3) {
        return Err(format!(
            "{} frames at {} Hz span {span} s, not the clip's {duration} s",
            h.frame_count, h.rate
        ));
    }
    Ok(())
}

/// `clip` resampled at `rate` frames per second: every track it has becomes a linear track with
/// a key per frame (the first at 0, the last at the duration), sampled in f64 as
/// [`crate::reference::sample`] does.
///
/// Errors: the clip fails [`crate::library::validate_clip`]; a rate that is not finite and
/// positive, or one that makes more than [`MAX_FRAMES`] frames.
pub fn resample(skeleton: &Skeleton, clip: &Clip, rate: f64) -> Result<Clip> {
    let cerr = |what: String| Error::Clip {
        clip: clip.name.clone(),
        what,
    };
    crate::library::validate_clip(skeleton, clip)?;
    if !(rate.is_finite() && rate > 0.0) {
        return Err(cerr(format!("resample rate {rate} Hz must be finite and positive")));
    }
    let frames = (f64::from(clip.duration) * rate).round() + 1.0;
    if frames > f64::from(MAX_FRAMES) {
        return Err(cerr(format!("{frames} frames at {rate} Hz; at most {MAX_FRAMES}")));
    }
    let frames = (frames as u32).max(2);
    let step = f64::from(clip.duration) / f64::from(frames - 1);
    let times: Vec<f32> = (0..frames).map(|f| (f64::from(f) * step) as f32).collect();
    let sampler = ClipSampler::new(skeleton, clip);
    let poses: Vec<Vec<TransformF64>> = (0..frames).map(|f| sampler.sample(f64::from(f) * step)).collect();
    let tracks = clip
        .tracks
        .iter()
        .map(|t| {
            let j = skeleton.joint_index(&t.joint).expect("a validated clip");
            let keys = |get: &dyn Fn(&TransformF64) -> DVec3| Track {
                interpolation: crate::Interpolation::Linear,
                times: times.clone(),
                values: poses.iter().map(|p| get(&p[j]).as_vec3()).collect(),
            };
            JointTrack {
                joint: t.joint.clone(),
                translation: t.translation.as_ref().map(|_| keys(&|p| p.translation)),
                rotation: t.rotation.as_ref().map(|_| Track {
                    interpolation: crate::Interpolation::Linear,
                    times: times.clone(),
                    values: poses.iter().map(|p| p[j].rotation.as_quat()).collect(),
                }),
                scale: t.scale.as_ref().map(|_| keys(&|p| p.scale)),
            }
        })
        .collect();
    Ok(Clip { tracks, ..clip.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    /// The largest distance, in seconds, of a key from its frame on a grid of `rate`.
    fn misalignment(times: &[f32], rate: f32) -> f64 {
        times
            .iter()
            .enumerate()
            .map(|(k, &t)| (f64::from(t) - k as f64 / f64::from(rate)).abs())
            .fold(0.0, f64::max)
    }

    /// Keys as a 120 Hz exporter writes them, key k at k times a frame of 8.3333 ms (not 1/120 s)
    /// in f32: the fitted grid is closer to them than the grid through the last key (3.0e-6 s
    /// against 3.2e-6 here), and within a unit in the last place of the last key (3.8e-6 s at
    /// 37 s: half of it the keys' own rounding, half the f32 rate's).
    #[test]
    fn frames_sit_on_the_grid_that_fits_the_keys() {
        let times: Vec<f32> = (0..4511).map(|k| k as f32 * 0.008_333_3).collect();
        let clip = Clip {
            name: "take".into(),
            duration: *times.last().unwrap(),
            looping: false,
            tracks: vec![JointTrack {
                joint: "root".into(),
                rotation: Some(Track::linear(
                    times
                        .iter()
                        .enumerate()
                        .map(|(k, &t)| (t, Quat::from_rotation_y(k as f32 * 0.01))),
                )),
                ..Default::default()
            }],
            events: Vec::new(),
            curves: Vec::new(),
        };
        let (frames, rate) = frame_grid(&clip, 120.0).unwrap();
        assert_eq!(frames, 4511);
        let through_last = ((f64::from(frames) - 1.0) / f64::from(clip.duration)) as f32;
        let (fitted, last) = (misalignment(&times, rate), misalignment(&times, through_last));
        let ulp = f64::from(clip.duration.next_up() - clip.duration);
        assert!(
            fitted <= ulp && fitted < last,
            "fitted grid {fitted} s, through the last key {last} s"
        );
    }
}
