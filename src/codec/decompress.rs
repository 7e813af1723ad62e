//! Decoding a compressed clip on the CPU in f64 (the accuracy oracle of the GPU's decode), and
//! the checks a blob passes before the library takes it.

use super::format::Blob;
use super::{CompressedClip, PackedChannel};
use crate::error::Channel;
use crate::reference::{ClipSampler, TransformF64};
use crate::skeleton::Skeleton;

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

/// Sets each packed track (`k`-th of `tracks`: its joint and channel) of `pose` to the blob's
/// f64 decode at time `t`.
pub(crate) fn apply_packed(
    blob: &Blob,
    tracks: impl Iterator<Item = (u32, Channel)>,
    t: f64,
    pose: &mut [TransformF64],
) {
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
