//! Clip compression: a clip's animated tracks sampled uniformly, range-reduced per clip and per
//! segment of frames, and quantized to per-segment, per-component bit widths chosen by an error
//! metric measured in object space; decoded on the GPU with random access (see [`crate::codec::format`]).
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
//! use wgpu_anim::offline::compress::{CompressionSettings, compress};
//! let skeleton = wgpu_anim::mannequin::skeleton();
//! let clip = &wgpu_anim::mannequin::clips(&skeleton)[0];
//! let (compressed, report) = compress(&skeleton, clip, &CompressionSettings::default()).unwrap();
//! assert!(report.max_error_cm <= 0.01 + 1e-9);
//! assert!(report.compressed_bytes < report.raw_bytes);
//! # let _ = compressed;
//! ```

mod context;
mod segment;

use context::*;
use segment::*;

use crate::clip::{Clip, JointTrack, Track};
use crate::codec::format;
use crate::codec::gpu_bytes;
use crate::codec::{ClipReport, CompressedClip, PackedChannel};
use crate::error::{Channel, Error, Result};
use crate::offline::decompress::{apply_packed, slerp};
use crate::reference::{ClipSampler, TransformF64};
use crate::skeleton::Skeleton;
use format::{
    Blob, MAX_WIDTH, RANGE_STEPS, SegmentTrack, Writer, rotation_from_stored, segment_range_f64, stored_of_rotation,
};
use glam::{DAffine3, DQuat, DVec3};
// `std::time::Instant` on native; `performance.now()` in a browser, where std has no clock.
use web_time::Instant;

/// Where between two frames the compressor also measures: a quarter of the way, near where nlerp
/// strays most from slerp (between frames they agree) and where a corner cut between frames shows.
pub const BETWEEN: f64 = 0.25;

/// The error a segment's widths are chosen for, as a fraction of the bounds: compensation and
/// the interpolation between frames move the decoded clip a little from what the segment's
/// allocation measured, and the blob's check raises widths by whole chains where it ends over
/// (so the bounds hold in the end whatever this is). Closer to 1 raises more chains but leaves
/// fewer bits unused: on the CMU take 0.99 is 0.6 % smaller and 20 % faster than 0.95.
const ALLOCATION_TARGET: f64 = 0.99;

/// The segment lengths a clip is compressed with when its settings name none
/// ([`CompressionSettings::segment_frames`]): the smaller result is kept.
pub const AUTO_SEGMENT_FRAMES: [u32; 2] = [16, 32];

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
    /// Frames per segment, a power of two (the decoder finds a frame's segment by a shift);
    /// `None` (the default): each of [`AUTO_SEGMENT_FRAMES`], keeping the smaller clip. Shorter
    /// segments narrow each track's range, so its frames take fewer bits; each segment adds a
    /// record per track (10 bytes). On a 120 Hz motion-capture take, 32 frames come out 2.3 %
    /// smaller than 16 and 8 frames 12 % larger.
    pub segment_frames: Option<u32>,
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
            segment_frames: None,
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
        if let Some(s) = self.segment_frames
            && !(s.is_power_of_two() && s <= format::MAX_SEGMENT_FRAMES)
        {
            return Err(format!(
                "{s} frames per segment (a power of two, 1 to {})",
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
/// Errors: the clip fails [`Clip::validate`](crate::Clip::validate); settings out of range; more than
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
    clip.validate(skeleton)?;
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
    let segment_lengths = match settings.segment_frames {
        Some(s) => vec![s],
        None => AUTO_SEGMENT_FRAMES.to_vec(),
    };
    // Each segment length on a thread of its own where there are threads (not in a browser);
    // the rates one after another, so that at most one raw clip sampled per length is held.
    let mut best: Option<(CompressedClip, ClipReport)> = None;
    for rate in rates {
        let run = |&segment_frames: &u32| compress_at(skeleton, clip, settings, segment_frames, rate, started);
        #[cfg(not(target_arch = "wasm32"))]
        let outs: Vec<Result<(CompressedClip, ClipReport)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = segment_lengths.iter().map(|s| scope.spawn(move || run(s))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                .collect()
        });
        #[cfg(target_arch = "wasm32")]
        let outs: Vec<Result<(CompressedClip, ClipReport)>> = segment_lengths.iter().map(run).collect();
        for out in outs {
            let out = out?;
            if best
                .as_ref()
                .is_none_or(|b| out.1.compressed_bytes < b.1.compressed_bytes)
            {
                best = Some(out);
            }
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
    segment_frames: u32,
    rate: f64,
    started: Instant,
) -> Result<(CompressedClip, ClipReport)> {
    let cerr = |what: String| Error::Clip {
        clip: clip.name.clone(),
        what,
    };
    let (frames, rate_f32) = frame_grid(clip, rate).map_err(cerr)?;
    let ctx = Context::new(skeleton, clip, settings, segment_frames, frames, f64::from(rate_f32));
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

/// `clip` resampled at `rate` frames per second: every track it has becomes a linear track with
/// a key per frame (the first at 0, the last at the duration), sampled in f64 as
/// [`crate::reference::sample`] does.
///
/// Errors: the clip fails [`Clip::validate`](crate::Clip::validate); a rate that is not finite and
/// positive, or one that makes more than [`MAX_FRAMES`] frames.
pub fn resample(skeleton: &Skeleton, clip: &Clip, rate: f64) -> Result<Clip> {
    let cerr = |what: String| Error::Clip {
        clip: clip.name.clone(),
        what,
    };
    clip.validate(skeleton)?;
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
            morph_weights: Vec::new(),
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
