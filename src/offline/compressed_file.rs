//! The compressed library file (`.wgac`): a skeleton's compressed clips, versioned and checked.
//!
//! ```text
//! bytes 0..4    magic "WGAC"
//! bytes 4..8    version (u32, little-endian; this reader reads 4)
//! bytes 8..16   length of the body in bytes (u64)
//! bytes 16..24  FNV-1a 64 hash of the body
//! body          the skeleton's name and joint names, then the clips: name, duration, looping,
//!               events, curves, morph-weight tracks, raw joint tracks, packed channels, blob
//! ```
//!
//! Reading checks the magic, the version, the length and the hash, every count against the bytes
//! left, every value's range and every blob ([`Blob::parse`](crate::codec::format::Blob::parse)); a file that fails
//! gets an [`Error::Asset`] naming the file and what is wrong, never a panic. Adding the clips to
//! a library ([`CompressedFile::add_to`]) checks them against the skeleton as any clip is.

use super::LibraryBuilder;
use crate::clip::{Clip, ClipEvent, FloatCurve, Interpolation, JointTrack, Track};
use crate::codec::{CompressedClip, PackedChannel};
use crate::error::{Channel, Error, Result};
use crate::library::{ClipId, SkeletonId};
use crate::skeleton::Skeleton;
use glam::{Quat, Vec3};
use std::path::Path;

/// The file's first four bytes.
pub const MAGIC: [u8; 4] = *b"WGAC";
/// The version this crate writes and reads.
pub const VERSION: u32 = 4;
const HEAD: usize = 24;

/// A compressed library file's contents: the clips of one skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct CompressedFile {
    /// The skeleton's name.
    pub skeleton: String,
    /// Its joint names, in order: the clips' packed channels index them.
    pub joints: Vec<String>,
    /// The clips.
    pub clips: Vec<CompressedClip>,
}

impl CompressedFile {
    /// Adds every clip to `builder` for `skeleton`, which must have the same joint names in the
    /// same order. On error nothing is added.
    ///
    /// Errors: a skeleton of another builder or library ([`Error::ForeignId`]); a skeleton whose
    /// joints differ; a clip [`LibraryBuilder::add_compressed_clip`] refuses.
    pub fn add_to(&self, builder: &mut LibraryBuilder, skeleton: SkeletonId) -> Result<Vec<ClipId>> {
        let skel: &Skeleton = builder.skeleton(skeleton)?;
        if skel.joint_names() != self.joints.as_slice() {
            return Err(Error::Asset {
                file: format!("compressed clips of '{}'", self.skeleton),
                what: format!(
                    "made for {} joints, not skeleton '{}' ({} joints, names or order differ)",
                    self.joints.len(),
                    skel.name(),
                    skel.joint_count()
                ),
            });
        }
        let mut trial = builder.clone_with_tag();
        let ids = self
            .clips
            .iter()
            .map(|c| trial.add_compressed_clip(skeleton, c))
            .collect::<Result<Vec<_>>>()?;
        *builder = trial;
        Ok(ids)
    }
}

/// The file's bytes.
#[must_use]
pub fn to_bytes(file: &CompressedFile) -> Vec<u8> {
    let mut w = Out::default();
    w.str(&file.skeleton);
    w.u32(file.joints.len() as u32);
    for j in &file.joints {
        w.str(j);
    }
    w.u32(file.clips.len() as u32);
    for c in &file.clips {
        let clip = &c.clip;
        w.str(&clip.name);
        w.f32(clip.duration);
        w.u32(u32::from(clip.looping));
        w.u32(clip.events.len() as u32);
        for e in &clip.events {
            w.str(&e.name);
            w.f32(e.time);
            w.f32(e.threshold);
        }
        w.u32(clip.curves.len() as u32);
        for cv in &clip.curves {
            w.str(&cv.name);
            w.track(&cv.track, |w, v| w.f32(*v));
        }
        w.u32(clip.morph_weights.len() as u32);
        for t in &clip.morph_weights {
            w.track(t, |w, v| w.f32(*v));
        }
        w.u32(clip.tracks.len() as u32);
        for t in &clip.tracks {
            w.str(&t.joint);
            w.option_track(t.translation.as_ref(), |w, v| w.vec3(*v));
            w.option_track(t.rotation.as_ref(), |w, q| {
                for x in q.to_array() {
                    w.f32(x);
                }
            });
            w.option_track(t.scale.as_ref(), |w, v| w.vec3(*v));
        }
        w.u32(c.packed.len() as u32);
        for p in &c.packed {
            w.u32(p.joint);
            w.u32(p.channel.index());
        }
        w.u32(c.blob.len() as u32);
        for x in &c.blob {
            w.u32(*x);
        }
    }
    let body = w.0;
    let mut out = Vec::with_capacity(HEAD + body.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(&body).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Writes `file` to `path`.
///
/// Errors: the file cannot be written.
pub fn write(path: &Path, file: &CompressedFile) -> Result<()> {
    std::fs::write(path, to_bytes(file)).map_err(|e| Error::Asset {
        file: path.display().to_string(),
        what: format!("cannot write: {e}"),
    })
}

/// Reads the file at `path`.
///
/// Errors: the file cannot be read, or is not a valid compressed library (see [`from_bytes`]).
pub fn read(path: &Path) -> Result<CompressedFile> {
    let bytes = std::fs::read(path).map_err(|e| Error::Asset {
        file: path.display().to_string(),
        what: format!("cannot read: {e}"),
    })?;
    from_bytes(&bytes).map_err(|what| Error::Asset {
        file: path.display().to_string(),
        what,
    })
}

/// Parses a file's bytes.
///
/// Errors: what is wrong, and where (a bad magic or version, a length or hash that does not
/// match, a count larger than the bytes left, a bad value or blob).
pub fn from_bytes(bytes: &[u8]) -> std::result::Result<CompressedFile, String> {
    if bytes.len() < HEAD {
        return Err(format!("{} bytes: too short for a compressed library", bytes.len()));
    }
    if bytes[0..4] != MAGIC {
        return Err("not a compressed library (bad magic)".into());
    }
    let version = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(format!("version {version}; this build reads version {VERSION}"));
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    if len != (bytes.len() - HEAD) as u64 {
        return Err(format!(
            "the header says {len} bytes follow, {} do (truncated or extended)",
            bytes.len() - HEAD
        ));
    }
    let hash = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
    let body = &bytes[HEAD..];
    if fnv1a(body) != hash {
        return Err("checksum mismatch: the file is corrupt".into());
    }
    let mut r = In { bytes: body, at: 0 };
    let skeleton = r.str("skeleton name")?;
    let joint_count = r.count("joints", 4)?;
    let joints = (0..joint_count)
        .map(|_| r.str("joint name"))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let clip_count = r.count("clips", 4)?;
    let mut clips = Vec::with_capacity(clip_count);
    for k in 0..clip_count {
        let clip = read_clip(&mut r, joint_count).map_err(|e| format!("clip {k}: {e}"))?;
        clips.push(clip);
    }
    if r.at != body.len() {
        return Err(format!("{} bytes after the last clip", body.len() - r.at));
    }
    Ok(CompressedFile {
        skeleton,
        joints,
        clips,
    })
}

fn read_clip(r: &mut In, joint_count: usize) -> std::result::Result<CompressedClip, String> {
    let name = r.str("name")?;
    let duration = r.f32()?;
    let looping = match r.u32()? {
        0 => false,
        1 => true,
        x => return Err(format!("looping flag {x}")),
    };
    let events = (0..r.count("events", 12)?)
        .map(|_| {
            Ok(ClipEvent {
                name: r.str("event name")?,
                time: r.f32()?,
                threshold: r.f32()?,
            })
        })
        .collect::<std::result::Result<Vec<_>, String>>()?;
    let curves = (0..r.count("curves", 8)?)
        .map(|_| {
            Ok(FloatCurve {
                name: r.str("curve name")?,
                track: r.track(1, |v| v[0])?,
            })
        })
        .collect::<std::result::Result<Vec<_>, String>>()?;
    let morph_weights = (0..r.count("morph-weight tracks", 12)?)
        .map(|_| r.track(1, |v| v[0]))
        .collect::<std::result::Result<Vec<_>, String>>()?;
    let tracks = (0..r.count("tracks", 16)?)
        .map(|_| {
            Ok(JointTrack {
                joint: r.str("joint name")?,
                translation: r.option_track(3, |v| Vec3::new(v[0], v[1], v[2]))?,
                rotation: r.option_track(4, |v| Quat::from_xyzw(v[0], v[1], v[2], v[3]))?,
                scale: r.option_track(3, |v| Vec3::new(v[0], v[1], v[2]))?,
            })
        })
        .collect::<std::result::Result<Vec<_>, String>>()?;
    let packed = (0..r.count("packed channels", 8)?)
        .map(|_| {
            let joint = r.u32()?;
            if joint as usize >= joint_count {
                return Err(format!("packed channel of joint {joint}; there are {joint_count}"));
            }
            let channel = match r.u32()? {
                0 => Channel::Translation,
                1 => Channel::Rotation,
                2 => Channel::Scale,
                x => return Err(format!("channel code {x}")),
            };
            Ok(PackedChannel { joint, channel })
        })
        .collect::<std::result::Result<Vec<_>, String>>()?;
    let blob = (0..r.count("blob words", 4)?)
        .map(|_| r.u32())
        .collect::<std::result::Result<Vec<_>, String>>()?;
    let clip = CompressedClip {
        clip: Clip {
            morph_weights,
            name,
            duration,
            looping,
            tracks,
            events,
            curves,
        },
        packed,
        blob,
    };
    crate::codec::check_blob(&clip).map_err(|e| format!("'{}': {e}", clip.clip.name))?;
    Ok(clip)
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn u32(&mut self, x: u32) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    fn f32(&mut self, x: f32) {
        self.u32(x.to_bits());
    }
    fn vec3(&mut self, v: Vec3) {
        for x in v.to_array() {
            self.f32(x);
        }
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn track<T>(&mut self, t: &Track<T>, value: impl Fn(&mut Self, &T)) {
        self.u32(t.interpolation.gpu_code());
        self.u32(t.times.len() as u32);
        for x in &t.times {
            self.f32(*x);
        }
        self.u32(t.values.len() as u32);
        for v in &t.values {
            value(self, v);
        }
    }
    fn option_track<T>(&mut self, t: Option<&Track<T>>, value: impl Fn(&mut Self, &T)) {
        match t {
            None => self.u32(0),
            Some(t) => {
                self.u32(1);
                self.track(t, value);
            }
        }
    }
}

struct In<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl In<'_> {
    fn take(&mut self, n: usize) -> std::result::Result<&[u8], String> {
        if self.bytes.len() - self.at < n {
            return Err(format!("ends at byte {} inside a value", self.bytes.len()));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u32(&mut self) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn f32(&mut self) -> std::result::Result<f32, String> {
        Ok(f32::from_bits(self.u32()?))
    }
    /// A count of items of at least `min_bytes` each, checked against the bytes left.
    fn count(&mut self, what: &str, min_bytes: usize) -> std::result::Result<usize, String> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_bytes) > self.bytes.len() - self.at {
            return Err(format!(
                "{n} {what} cannot fit in the {} bytes left",
                self.bytes.len() - self.at
            ));
        }
        Ok(n)
    }
    fn str(&mut self, what: &str) -> std::result::Result<String, String> {
        let n = self.count(what, 1)?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| format!("{what} is not UTF-8"))
    }
    fn track<T>(&mut self, width: usize, value: impl Fn(&[f32]) -> T) -> std::result::Result<Track<T>, String> {
        let interpolation = match self.u32()? {
            0 => Interpolation::Step,
            1 => Interpolation::Linear,
            2 => Interpolation::CubicSpline,
            x => return Err(format!("interpolation code {x}")),
        };
        let times = (0..self.count("key times", 4)?)
            .map(|_| self.f32())
            .collect::<std::result::Result<Vec<_>, String>>()?;
        let values = (0..self.count("key values", 4 * width)?)
            .map(|_| {
                let v = (0..width)
                    .map(|_| self.f32())
                    .collect::<std::result::Result<Vec<_>, String>>()?;
                Ok(value(&v))
            })
            .collect::<std::result::Result<Vec<_>, String>>()?;
        Ok(Track {
            interpolation,
            times,
            values,
        })
    }
    fn option_track<T>(
        &mut self,
        width: usize,
        value: impl Fn(&[f32]) -> T,
    ) -> std::result::Result<Option<Track<T>>, String> {
        match self.u32()? {
            0 => Ok(None),
            1 => self.track(width, value).map(Some),
            x => Err(format!("track presence flag {x}")),
        }
    }
}
