//! [`GpuLibrary`]: an [`AnimationLibrary`] uploaded once into one read-only storage buffer (the
//! heap) plus a small uniform saying where each section starts, shared by every animator that
//! plays it. One binding for all of a library's data leaves storage slots free in every stage.

use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;
use crate::layout::{
    GpuLibraryLayout, GpuTrack, INTERP_PACKED, JOINT_TRACK_OFFSET_BITS, PACKED_JOINT_BIT, RETARGET_ROOT,
    RETARGET_WORD_LINKS_SHIFT, RETARGET_WORD_ROOT, RETARGET_WORD_SCALED, RETARGET_WORD_SOURCE, joint_track_word,
};
use crate::library::AnimationLibrary;
use std::sync::Arc;
use wgpu::util::DeviceExt;

/// One 16-byte heap unit, as WGSL reads it (`vec4<u32>`).
type Unit = [u32; 4];

/// The library's heap and its layout, built on the CPU (no device needed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LibraryHeap {
    /// Where each section starts.
    pub layout: GpuLibraryLayout,
    /// The headers every frame looks up — clips, tracks, skeletons, blend nodes, children,
    /// triangles and clip events — then the bulk data: key times, key values (with rest poses
    /// and masks), parents, inverse binds, sockets, packed tracks, IK chains and hierarchy
    /// levels.
    pub heap: Vec<Unit>,
}

/// Appends `items` (each a whole number of 16-byte units) to `heap`; returns the first unit.
fn section<T: bytemuck::Pod>(heap: &mut Vec<Unit>, items: &[T]) -> u32 {
    let start = heap.len() as u32;
    heap.extend_from_slice(bytemuck::cast_slice(items));
    start
}

/// Appends 32-bit words, four per unit, the last unit padded with zeros.
fn words(heap: &mut Vec<Unit>, items: &[u32]) -> u32 {
    let start = heap.len() as u32;
    heap.extend(items.chunks(4).map(|c| {
        let mut unit = [0; 4];
        unit[..c.len()].copy_from_slice(c);
        unit
    }));
    start
}

/// Per clip joint, a unit of its translation, rotation and scale tracks' words, and where each
/// clip's units start (`GpuLibraryLayout::joint_tracks`, `clip_joint_tracks`): for a library whose
/// sample stage reads them, [`joint_track_word`]s and a word per clip (`CLIP_TIMES` without
/// `COMPRESSED`) or [`packed_joint_word`]s and a unit per clip (`PACKED_ONLY`,
/// `shaders/sample.wgsl`); none for another. A word that does not fit is 0, which only a heap
/// larger than any device's binding holds ([`GpuLibrary::new_async`] refuses it).
fn joint_track_units(library: &AnimationLibrary) -> (Vec<Unit>, Vec<u32>) {
    let mut units = Vec::new();
    let mut firsts = Vec::new();
    let packed_only = library.gpu_samples_packed_only();
    if !packed_only && (!library.clips_share_key_times() || library.has_compressed_clips()) {
        return (units, firsts);
    }
    for clip in library.clips() {
        let first = clip.track_offset as usize;
        let tracks = &library.tracks()[first..first + 3 * clip.joint_count as usize];
        if packed_only {
            // The clip's blob, as its packed tracks name it (the track's number left out).
            let blob = tracks.iter().find(|t| t.interpolation == INTERP_PACKED);
            let blob = blob.map_or([0; 3], |t| [t.time_offset, t.key_count, t.value_offset & !0x3ff]);
            firsts.extend([units.len() as u32, blob[0], blob[1], blob[2]]);
        } else {
            firsts.push(units.len() as u32);
        }
        for joint in tracks.chunks_exact(3) {
            let word = |t| {
                if packed_only {
                    packed_joint_word(t)
                } else {
                    joint_track_word(t)
                }
                .unwrap_or(0)
            };
            units.push([word(&joint[0]), word(&joint[1]), word(&joint[2]), 0]);
        }
    }
    (units, firsts)
}

/// A joint channel in one word, as the sample stage reads a library of packed clips only
/// (WGSL `sample_packed_joint`): for a packed track, bit 31 and the track's index in its clip's
/// blob (bits 0..10, as [`crate::layout::packed_track_ref`] holds it); for a track of a single key, the index
/// of that key's value (the middle value of a cubic-spline key), below 2³¹. `None` for a raw
/// track of more keys, or an index that does not fit.
#[must_use]
fn packed_joint_word(track: &GpuTrack) -> Option<u32> {
    if track.interpolation == INTERP_PACKED {
        return Some(PACKED_JOINT_BIT | (track.value_offset & 0x3ff));
    }
    let cubic = crate::Interpolation::CubicSpline.gpu_code();
    let value = track
        .value_offset
        .checked_add(u32::from(track.interpolation == cubic))?;
    (track.key_count <= 1 && value < PACKED_JOINT_BIT).then_some(value)
}

/// Per skeleton, the unit of its retarget head, and the retarget tables
/// (`GpuLibraryLayout::retargets`, `retarget_joints`; WGSL `retarget_head`, `retarget_unit`),
/// none for a library without a retargeted skeleton: a skeleton that plays its own clips has a
/// head of zeros; one played through a retarget, 1 +
/// its table's first unit, its source's first entry in the parents, its retarget root and the
/// height ratio; its table holds `root_from_source` (three units), then each joint's `a`, `b`,
/// and its rest translation with its word ([`RETARGET_WORD_SOURCE`]).
fn retarget_units(library: &AnimationLibrary) -> (Vec<Unit>, Vec<Unit>) {
    let mut heads = Vec::new();
    let mut tables: Vec<Unit> = Vec::new();
    if !library.has_retargets() {
        // Read only by the `RETARGET` variants.
        return (heads, tables);
    }
    for k in 0..library.gpu_skeletons().len() {
        let Some(r) = library.retarget_at(k as u32) else {
            heads.push([0; 4]);
            continue;
        };
        let root = r.joints.iter().position(|e| e.flags & RETARGET_ROOT != 0).unwrap_or(0);
        heads.push([tables.len() as u32 + 1, r.source_joints, root as u32, r.ratio.to_bits()]);
        tables.extend_from_slice(bytemuck::cast_slice(std::slice::from_ref(&r.root_from_source)));
        let rest = library.gpu_skeletons()[k].rest_offset as usize;
        for (j, e) in r.joints.iter().enumerate() {
            let [t, _, scale] = [0, 1, 2].map(|c| library.values()[rest + 3 * j + c]);
            let source = e.source.min(RETARGET_WORD_SOURCE);
            let mut word = source | (e.links.min(255) << RETARGET_WORD_LINKS_SHIFT);
            if e.flags & RETARGET_ROOT != 0 {
                word |= RETARGET_WORD_ROOT;
            }
            if scale.truncate() != glam::Vec3::ONE {
                word |= RETARGET_WORD_SCALED;
            }
            tables.push(bytemuck::cast(e.a));
            tables.push(bytemuck::cast(e.b));
            tables.push([t.x.to_bits(), t.y.to_bits(), t.z.to_bits(), word]);
        }
    }
    (heads, tables)
}

impl LibraryHeap {
    /// Packs `library` (the WGSL accessors in `shaders/shared/library.wgsl` read it back): the
    /// small records first, so that a frame's lookups stay together, then the bulk data.
    #[must_use]
    pub fn new(library: &AnimationLibrary) -> Self {
        let mut heap = Vec::new();
        let blend = library.blend();
        let machines = library.machines();
        let h = &mut heap;
        let layout = GpuLibraryLayout {
            clips: section(h, library.clips()),
            tracks: section(h, library.tracks()),
            skeletons: section(h, library.gpu_skeletons()),
            blend_nodes: section(h, &blend.nodes),
            blend_children: section(h, &blend.children),
            blend_triangles: section(h, &blend.triangles),
            events: section(h, library.events()),
            times: words(h, bytemuck::cast_slice(library.times())),
            values: section(h, library.values()),
            parents: words(h, bytemuck::cast_slice(library.parents())),
            inverse_binds: section(h, library.inverse_binds()),
            sockets: section(h, library.gpu_sockets()),
            packed: words(h, library.packed()),
            ik_chains: section(h, library.gpu_ik_chains()),
            levels: words(h, library.levels()),
            clip_key_tracks: words(h, library.clip_key_tracks()),
            joint_tracks: 0,
            clip_joint_tracks: 0,
            machines: section(h, &machines.machines),
            machine_states: section(h, &machines.states),
            machine_transitions: section(h, &machines.transitions),
            machine_conditions: section(h, &machines.conditions),
            machine_candidates: words(h, &machines.candidates),
            retargets: 0,
            retarget_joints: 0,
        };
        let (joint_tracks, clip_joint_tracks) = joint_track_units(library);
        let (retarget_heads, retarget_tables) = retarget_units(library);
        let layout = GpuLibraryLayout {
            joint_tracks: section(h, &joint_tracks),
            clip_joint_tracks: words(h, &clip_joint_tracks),
            retargets: section(h, &retarget_heads),
            retarget_joints: section(h, &retarget_tables),
            ..layout
        };
        // A binding may not be empty.
        if heap.is_empty() {
            heap.push([0; 4]);
        }
        Self { layout, heap }
    }
}

/// An [`AnimationLibrary`] on the GPU, uploaded once: share it between animators with
/// [`crate::Animator::with_library`].
#[derive(Debug)]
pub struct GpuLibrary {
    library: Arc<AnimationLibrary>,
    layout: GpuLibraryLayout,
    layout_buffer: wgpu::Buffer,
    heap: wgpu::Buffer,
}

impl GpuLibrary {
    /// Uploads `library` to `device`. `async` because it waits for the device to accept the
    /// buffers: `.await` it in a browser; natively [`GpuLibrary::new`] blocks on it.
    ///
    /// Errors: a heap larger than the device's `max_storage_buffer_binding_size` (the message
    /// says by how much; WebGPU's default is 128 MiB); buffers the device refuses
    /// ([`Error::Refused`]).
    pub async fn new_async(device: &wgpu::Device, library: &AnimationLibrary) -> Result<Arc<Self>> {
        let packed = LibraryHeap::new(library);
        let cap = device.limits().max_storage_buffer_binding_size;
        let bytes = (packed.heap.len() * size_of::<Unit>()) as u64;
        if bytes > cap {
            return Err(Error::Limit {
                what: format!(
                    "the library's heap would take {bytes} bytes; the device allows {cap} per storage buffer"
                ),
            });
        }
        if library.values().len() as u64 > 1 << JOINT_TRACK_OFFSET_BITS {
            return Err(Error::Limit {
                what: format!(
                    "the library holds {} key values; the sample stage addresses at most {}",
                    library.values().len(),
                    1u64 << JOINT_TRACK_OFFSET_BITS
                ),
            });
        }
        let (layout_buffer, heap) = super::refusable(
            device,
            || format!("the library's heap ({bytes} bytes)"),
            || {
                let layout = bytemuck::bytes_of(&packed.layout);
                let layout_buffer = super::wgpu_util::uniform_buffer_init(device, "wgpu-anim library layout", layout);
                let heap = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("wgpu-anim library heap"),
                    contents: bytemuck::cast_slice(&packed.heap),
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                });
                (layout_buffer, heap)
            },
        )
        .await?;
        // In a browser wgpu's buffers are neither Send nor Sync; the Arc still shares one upload.
        #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
        Ok(Arc::new(Self {
            library: Arc::new(library.clone()),
            layout: packed.layout,
            layout_buffer,
            heap,
        }))
    }

    blocking! {
        /// [`GpuLibrary::new_async`], blocking until the device answers (native only: a browser
        /// cannot block).
        ///
        /// Errors: as [`GpuLibrary::new_async`].
        pub fn new(device: &wgpu::Device, library: &AnimationLibrary) -> Result<Arc<Self>> = Self::new_async;
    }

    /// The library as authored data (the CPU mirrors and the animator's validation read it).
    #[must_use]
    pub fn library(&self) -> &AnimationLibrary {
        &self.library
    }

    /// The library as shared (the animators' controllers hold it).
    #[must_use]
    pub fn library_arc(&self) -> &Arc<AnimationLibrary> {
        &self.library
    }

    /// Where each section of the heap starts.
    #[must_use]
    pub fn layout(&self) -> &GpuLibraryLayout {
        &self.layout
    }

    /// The uniform holding [`GpuLibrary::layout`].
    #[must_use]
    pub fn layout_buffer(&self) -> &wgpu::Buffer {
        &self.layout_buffer
    }

    /// The heap: every section of the library, read-only ([`LibraryHeap`]).
    #[must_use]
    pub fn heap(&self) -> &wgpu::Buffer {
        &self.heap
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::INTERP_PACKED;

    #[test]
    fn joint_track_words_hold_each_clip_joints_three_headers() {
        let lib = crate::mannequin::library_in(crate::offline::compress::ClipFormat::Raw).0;
        let heap = LibraryHeap::new(&lib);
        let l = heap.layout;
        let mut singles = 0;
        for (c, clip) in lib.clips().iter().enumerate() {
            let first = heap.heap[l.clip_joint_tracks as usize + c / 4][c % 4];
            for j in 0..clip.joint_count {
                let unit = heap.heap[(l.joint_tracks + first + j) as usize];
                assert_eq!(unit[3], 0);
                for (k, &w) in unit[..3].iter().enumerate() {
                    let t = &lib.tracks()[(clip.track_offset + 3 * j) as usize + k];
                    assert_eq!(
                        w & ((1 << JOINT_TRACK_OFFSET_BITS) - 1),
                        t.value_offset,
                        "clip {c} joint {j}"
                    );
                    assert_eq!((w >> JOINT_TRACK_OFFSET_BITS) & 3, t.interpolation);
                    assert_eq!(w >> 31 == 1, t.key_count <= 1);
                    singles += usize::from(t.key_count <= 1);
                }
            }
        }
        // The mannequin's clips hold constant channels as a single key, and animated ones.
        assert!(singles > 0 && singles < 3 * lib.clips().iter().map(|c| c.joint_count as usize).sum::<usize>());
        // A library whose sample stage does not read them (compressed clips beside morph-weight
        // tracks: the raw sampler stays) has none.
        let breathing = crate::mannequin::library_breathing_in(crate::offline::compress::ClipFormat::Compressed).0;
        assert!(breathing.has_compressed_clips() && !breathing.gpu_samples_packed_only());
        let heap = LibraryHeap::new(&breathing);
        assert_eq!(heap.layout.joint_tracks, heap.layout.clip_joint_tracks);
        assert_eq!(heap.layout.clip_joint_tracks as usize, heap.heap.len());
    }

    #[test]
    fn packed_joint_words_hold_each_clip_joints_channels_and_the_clip_unit_its_blob() {
        let lib = crate::mannequin::library_in(crate::offline::compress::ClipFormat::Compressed).0;
        assert!(lib.gpu_samples_packed_only());
        let heap = LibraryHeap::new(&lib);
        let l = heap.layout;
        let (mut packed, mut single) = (0, 0);
        for (c, clip) in lib.clips().iter().enumerate() {
            let unit = heap.heap[l.clip_joint_tracks as usize + c];
            for j in 0..clip.joint_count {
                let words = heap.heap[(l.joint_tracks + unit[0] + j) as usize];
                assert_eq!(words[3], 0);
                for (k, &w) in words[..3].iter().enumerate() {
                    let t = &lib.tracks()[(clip.track_offset + 3 * j) as usize + k];
                    if t.interpolation == INTERP_PACKED {
                        // The track as the shader rebuilds it from the word and the clip's unit.
                        assert!(w & crate::layout::PACKED_JOINT_BIT != 0, "clip {c} joint {j}");
                        let rebuilt = [unit[1], unit[2], unit[3] | (w & 0x3ff)];
                        assert_eq!(rebuilt, [t.time_offset, t.key_count, t.value_offset]);
                        packed += 1;
                    } else {
                        assert_eq!(w, t.value_offset, "clip {c} joint {j}");
                        assert!(t.key_count <= 1);
                        single += 1;
                    }
                }
            }
        }
        assert!(packed > 0 && single > 0);
    }

    #[test]
    fn a_joint_track_word_refuses_what_does_not_fit() {
        let track = |value_offset, interpolation| GpuTrack {
            time_offset: 0,
            key_count: 2,
            value_offset,
            interpolation,
        };
        let last = (1 << JOINT_TRACK_OFFSET_BITS) - 1;
        assert_eq!(
            joint_track_word(&track(last, INTERP_PACKED)),
            Some(last | INTERP_PACKED << 29)
        );
        assert_eq!(joint_track_word(&track(last + 1, 0)), None);
        assert_eq!(joint_track_word(&track(0, 4)), None);
    }

    #[test]
    fn a_packed_joint_word_is_a_blob_track_or_a_single_keys_value() {
        let track = |key_count, value_offset, interpolation| GpuTrack {
            time_offset: 0,
            key_count,
            value_offset,
            interpolation,
        };
        let bit = crate::layout::PACKED_JOINT_BIT;
        // Track 5 of a blob of 9 tracks in segments of 16 frames.
        let packed = crate::layout::packed_track_ref(5, 9, 4);
        assert_eq!(packed_joint_word(&track(40, packed, INTERP_PACKED)), Some(bit | 5));
        let cubic = crate::Interpolation::CubicSpline.gpu_code();
        assert_eq!(packed_joint_word(&track(1, 70, 1)), Some(70));
        // A cubic-spline key's value is its middle one.
        assert_eq!(packed_joint_word(&track(1, 70, cubic)), Some(71));
        assert_eq!(packed_joint_word(&track(1, bit - 1, cubic)), None);
        assert_eq!(packed_joint_word(&track(1, bit, 1)), None);
        // A raw track of more keys is not for this word.
        assert_eq!(packed_joint_word(&track(2, 70, 1)), None);
    }
}
