//! Compressed clips, the runtime half: the asset form of a compressed clip ([`CompressedClip`]),
//! its blob's format and the GPU's decode ([`format`](mod@format)), the checks a blob passes before it is
//! played ([`decompress`]), and what a compression reports ([`ClipReport`]).
//! The compressor and the f64 decoder that measures it are the offline half's
//! ([`crate::offline::compress`], [`crate::offline::decompress`]); nothing here imports them, as
//! ACL's decompression knows nothing of its compression, nor the f64 reference.

pub mod decompress;
pub mod format;

pub use decompress::check_blob;

use crate::clip::Clip;
use crate::error::Channel;

/// A joint channel stored in a compressed clip's blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedChannel {
    /// The joint, an index into the skeleton's joints.
    pub joint: u32,
    /// Which channel.
    pub channel: Channel,
}

/// A compressed clip in asset form: what [`crate::LibraryBuilder::add_compressed_clip`] checks
/// and adds, and what [`crate::offline::compressed_file`] stores.
#[derive(Clone, Debug, PartialEq)]
pub struct CompressedClip {
    /// The clip's name, duration, looping, events and curves, and the joint tracks kept raw:
    /// constants (one key), and the tracks the format could not hold. Channels it lacks hold the
    /// rest pose unless packed.
    pub clip: Clip,
    /// The channels in the blob, its track `k` being `packed[k]`.
    pub packed: Vec<PackedChannel>,
    /// The packed tracks ([`format`](mod@format)); empty when no track is packed.
    pub blob: Vec<u32>,
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
    /// Frames per segment.
    pub segment_frames: u32,
    /// Raw size as ACL counts it: 40 bytes per joint per sample.
    pub raw_bytes: usize,
    /// Bytes the clip takes on the GPU: its header, track records, raw keys and blob.
    pub compressed_bytes: usize,
    /// Where the blob's bytes go ([`format::BlobBytes`]; all 0 when no track is packed).
    pub blob_bytes: format::BlobBytes,
    /// Largest error, cm, over every joint at every frame and a quarter of the way between frames ([`BETWEEN`](crate::offline::compress::BETWEEN)).
    pub max_error_cm: f64,
    /// 99th percentile of those errors, cm.
    pub p99_error_cm: f64,
    /// Mean of those errors, cm.
    pub mean_error_cm: f64,
    /// The joint of the largest error.
    pub max_error_joint: String,
    /// The clip time of the largest error, seconds.
    pub max_error_time: f64,
    /// Largest rotation error of a joint in object space, as
    /// [`CompressionSettings::rotation_tolerance`](crate::offline::compress::CompressionSettings::rotation_tolerance) measures it.
    pub max_rotation_error: f64,
    /// Largest error of a skin matrix's translation, as a fraction of the skeleton's size
    /// ([`CompressionSettings::skin_tolerance`](crate::offline::compress::CompressionSettings::skin_tolerance)).
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
