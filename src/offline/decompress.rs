//! Decoding a compressed clip on the CPU in f64: the accuracy oracle of the GPU's decode, which
//! the compressor measures its error with. It samples raw tracks as the f64 reference does
//! ([`crate::reference::ClipSampler`]) and slerps exactly, so it lives in the offline half, which
//! may depend on both the codec and the reference; the runtime's codec ([`crate::codec`]) depends
//! on neither the reference nor this.

use crate::codec::format::{Blob, frame_at, rotation_from_stored};
use crate::codec::{CompressedClip, PackedChannel, check_blob};
use crate::error::Channel;
use crate::reference::{ClipSampler, TransformF64};
use crate::skeleton::Skeleton;
use glam::{DQuat, DVec3};

impl CompressedClip {
    /// The local pose of every joint at clip time `t` (clamped to the clip), decoded in f64: the
    /// raw tracks sampled as [`crate::reference::sample`] does, the packed ones from the blob.
    ///
    /// Errors: a malformed blob or packed channels ([`check_blob`]; a clip from [`compress`](crate::offline::compress::compress) or
    /// [`read`](crate::offline::compressed_file::read) never has one), or a packed joint `skeleton` lacks.
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

impl Blob<'_> {
    /// Track `k` at clip time `t` in f64: translation or scale (xyz), or a rotation (slerp of the
    /// two frames around `t`, as a raw track's).
    #[must_use]
    pub fn sample_f64(&self, k: u32, t: f64, rotation: bool) -> (DVec3, DQuat) {
        let h = self.header();
        let (f0, u) = frame_at(h.frame_count, f64::from(h.rate), t);
        let (a, da) = self.frame_f64(k, f0);
        let (b, db) = self.frame_f64(k, f0 + 1);
        if rotation {
            let (qa, qb) = (rotation_from_stored(a, da), rotation_from_stored(b, db));
            return (DVec3::ZERO, slerp(qa, qb, u));
        }
        (a.lerp(b, u), DQuat::IDENTITY)
    }
}

/// Slerp along the shorter arc, exact, as the f64 reference samples a raw track (the GPU's
/// `fast_slerp` is within 3e-7 rad of it).
#[must_use]
pub fn slerp(a: DQuat, b: DQuat, u: f64) -> DQuat {
    DQuat::from_vec4(crate::reference::slerp(a.into(), b.into(), u).normalize())
}
