//! Bytes per joint a frame reads and writes, counted from the buffer layouts: per character,
//! and shared library data (cached on a GPU).

use super::*;

/// Bytes per joint per frame (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Traffic {
    /// Data of one character (instance, clock, blend list, poses, palette).
    pub per_character: f64,
    /// Library data read by many characters.
    pub shared: f64,
}

/// The bytes `key_span` (shaders/shared/library.wgsl) reads: its search's key times and the two
/// keys' times, among `n` keys.
fn span_bytes(n: u32) -> u64 {
    4 * (u64::from(n.max(1).next_power_of_two().trailing_zeros()) + 2)
}

/// The key times a blend-list sample of `clip` searches once per character (`list_sample_keys`
/// in shaders/sample.wgsl): its key track's, offset and count; none for a packed clip.
fn sample_times(lib: &AnimationLibrary, clip: usize) -> Option<(u32, u32)> {
    let track = &lib.tracks()[lib.clip_key_tracks()[clip] as usize];
    (lib.clips()[clip].joint_count > 0 && track.interpolation != crate::layout::INTERP_PACKED)
        .then(|| (track.time_offset, track.key_count.max(1)))
}

/// The bytes `sample_joint` (shaders/sample.wgsl) reads for one channel's `track` at time `t`;
/// `times`: with CLIP_TIMES, the sample's key times ([`sample_times`]), whose span a raw track
/// keyed at them takes rather than searching.
fn key_bytes(lib: &AnimationLibrary, track: &GpuTrack, t: f32, times: Option<(u32, u32)>) -> u64 {
    const VALUE: u64 = 16;
    if track.interpolation == crate::layout::INTERP_PACKED {
        return packed_bytes(lib.packed(), track, t);
    }
    // Its key search and the two keys' times (`key_span`), unless the sample's, and two values
    // (four with a cubic spline's tangents).
    let own = (track.time_offset, track.key_count.max(1));
    let mut bytes = 0;
    if Some(own) != times {
        bytes += span_bytes(own.1);
    }
    let values = if track.interpolation == crate::Interpolation::CubicSpline.gpu_code() {
        4
    } else {
        2
    };
    bytes + values * VALUE
}

/// The bytes `sample_packed` (shaders/shared/library.wgsl) reads for a packed track at time `t`:
/// the header's rate, the track's clip range, and per segment it decodes from (one, or two where
/// the frame ends a segment) the record's first bit, the track's field and its two words of range
/// bytes and the words that hold the track's two rows.
fn packed_bytes(packed: &[u32], track: &GpuTrack, t: f32) -> u64 {
    let p = |i: u32| packed[i as usize];
    let b = track.time_offset;
    let frames = track.key_count;
    let (k, tracks, shift) = (
        track.value_offset & 0x3ff,
        (track.value_offset >> 10) & 0x3ff,
        track.value_offset >> 20,
    );
    let segment_frames = 1 << shift;
    let record_words = crate::codec::format::record_words(tracks);
    let ft = (t * f32::from_bits(p(b + 1))).clamp(0.0, (frames - 1) as f32);
    let f0 = (ft as u32).min(frames - 2);
    let (s0, s1) = (f0 >> shift, (f0 + 1) >> shift);
    let mut words = 1 + 6;
    for s in if s0 == s1 { s0..=s0 } else { s0..=s1 } {
        let record = b + 8 + 6 * tracks + s * record_words;
        let fields = p(record + 2 + k);
        let field = (fields >> 16) & 0x3fff;
        let row_bits = field % 25 + field / 25 % 25 + field / 625;
        let rows = segment_frames.min(frames - (s << shift));
        let row = if s == s0 { f0 - (s << shift) } else { 0 };
        let bit = p(record) + rows * (fields & 0xffff) + row * row_bits;
        words += 4 + (bit % 32 + (rows - row).min(2) * row_bits).div_ceil(32);
    }
    4 * u64::from(words)
}

/// The 16-byte units of its clock the clock stage reads and writes in a frame of `inst`
/// (`load_clock_units`, shaders/shared/state.wgsl): the target's always, the source's and the
/// transition's while a transition runs, layer 0's with the transition's, layers 1 and 2's. On
/// the frame a state starts, the source's and the transition's too: not counted, a frame in
/// many.
fn clock_units(inst: &GpuInstance) -> u64 {
    let transition = inst.source_kind() != crate::layout::source_kind::NONE;
    let layer_on = |k: u32| inst.flags & (crate::layout::LAYER_ON << k) != 0;
    let layers_on = (0..crate::layout::MAX_LAYERS).any(layer_on);
    1 + u64::from(transition || layers_on)
        + u64::from(transition || layer_on(0))
        + u64::from(layer_on(1) || layer_on(2))
}

/// The bytes the clock reads of the `nodes` blend nodes from `offset`: each node, its children
/// and its triangles.
fn tree_bytes(lib: &AnimationLibrary, offset: u32, nodes: u32) -> u64 {
    let mut b = 0;
    for k in 0..nodes {
        let node = &lib.blend().nodes[(offset + k) as usize];
        b += size_of::<GpuBlendNode>() as u64
            + u64::from(node.child_count) * size_of::<GpuBlendChild>() as u64
            + u64::from(node.triangle_count) * 16;
    }
    b
}

/// Bytes per joint of one frame of `instances`, whose blend lists for the frame are `lists`, on
/// `path` (see the module docs for what is counted): [`traffic_with_machines`] without the
/// machines' states, so that a character with a machine counts its own machine bytes but not
/// the library's.
#[must_use]
pub fn traffic(lib: &AnimationLibrary, instances: &[GpuInstance], lists: &[BlendList], path: PathKind) -> Traffic {
    traffic_with_machines(lib, instances, lists, &[], path)
}

/// As [`traffic`], `machines` the instances' state machines as the frame found them (as
/// [`Animator::read_machines_page`] reads them; empty or short: the library's machine bytes of
/// the instances past its end are not counted). A character with a machine adds the 64 bytes of
/// its machine state and the 64 of its parameter slots the clock reads and the state it writes
/// back, and, shared, the machine's header, state and candidate transitions with their
/// conditions (an upper bound: the rules stop at a condition that fails).
#[must_use]
pub fn traffic_with_machines(
    lib: &AnimationLibrary,
    instances: &[GpuInstance],
    lists: &[BlendList],
    machines: &[crate::layout::GpuMachineState],
    path: PathKind,
) -> Traffic {
    // The staged GPU path and the CPU mirror move the same buffers; the fused path keeps the pose
    // in workgroup memory.
    let fused = path == PathKind::GpuFused;
    // With CLIP_TIMES the sample stage searches each sample's key times once per character.
    let clip_times = lib.clips_share_key_times();
    let sz = |n: usize| n as u64;
    let (mut own, mut shared, mut joints) = (0u64, 0u64, 0u64);
    let tree_bytes = |offset: u32, nodes: u32| tree_bytes(lib, offset, nodes);
    // The sections of an instance that are read (see `GpuInstance`): its header (flags, skeleton,
    // joint range) by every stage, the rest of its first section by the clock.
    let instance_header = sz(std::mem::offset_of!(GpuInstance, clip));
    let instance_base = sz(std::mem::offset_of!(GpuInstance, source_clip));
    let instance_transition = sz(std::mem::offset_of!(GpuInstance, world)) - instance_base;
    let instance_layers =
        sz(std::mem::offset_of!(GpuInstance, morph_offset)) - sz(std::mem::offset_of!(GpuInstance, layers));
    // A clock's 16-byte units ([`clock_units`]).
    let clock_unit = sz(size_of::<GpuClock>()) / 4;
    for (k, (inst, list)) in instances.iter().zip(lists).enumerate() {
        let j = u64::from(inst.joint_count);
        joints += j;
        // clock: a machine's state in and out and its parameter slots; its library records.
        if machine::follows_machine(inst) {
            own += machine::MACHINE_OWN_BYTES;
            if let Some(state) = machines.get(k) {
                shared += machine::machine_shared_bytes(lib, state);
            }
        }
        let layers_on = (0..crate::layout::MAX_LAYERS)
            .filter(|&k| inst.flags & (crate::layout::LAYER_ON << k) != 0)
            .count() as u64;
        // clock: the instance's first section, the transition's while one is set, the layer
        // section while a layer is on; the units of its clock in use, in and out. Each layer
        // that is on reads its definition, which the instances playing it share.
        let transition = inst.source_kind() != crate::layout::source_kind::NONE;
        own += instance_base + 2 * clock_units(inst) * clock_unit;
        if transition {
            own += instance_transition;
        }
        if layers_on > 0 {
            own += instance_layers;
            shared += layers_on * sz(size_of::<GpuLayerDef>());
        }
        // The blend list, written by clock and read by sample (or the fused stage): its head,
        // its layers (an animator with layers, which a character with a layer on has) and its
        // first `count` samples (`store_blend_list`, shaders/shared/state.wgsl); sample,
        // local_to_model and palette read the instance's header, the fused stage once.
        let unit = sz(size_of::<crate::layout::BlendSample>());
        let list_layers = if layers_on > 0 {
            u64::from(crate::layout::MAX_LAYERS) * sz(size_of::<crate::layout::LayerApply>())
        } else {
            0
        };
        let list_bytes = unit + list_layers + u64::from(list.count.min(crate::layout::MAX_BLEND_CLIPS)) * unit;
        own += 2 * list_bytes + if fused { 1 } else { 3 } * instance_header;
        let skel = &lib.gpu_skeletons()[inst.skeleton as usize];
        let parents = &lib.parents()[skel.joint_offset as usize..(skel.joint_offset + skel.joint_count) as usize];
        let with_parent = parents
            .iter()
            .enumerate()
            .filter(|&(k, &p)| p >= 0 && (p as usize) < k)
            .count() as u64;
        let pose = sz(size_of::<LocalPose>());
        let matrix = sz(size_of::<Affine>());
        if fused {
            // Only the palette is written.
            own += j * matrix;
        } else {
            // sample writes the local pose; local_to_model reads it, reads the parent's model
            // matrix, writes the model matrix; palette reads it and writes the palette.
            own += j * (2 * pose + 3 * matrix) + with_parent * matrix;
            // Mesh-space layers: sample writes each joint's delta, local_to_model reads it and
            // writes its scratch, which the children read.
            if list.mesh_additive != 0 {
                own += j * 3 * pose + with_parent * pose;
            }
        }
        if list.inertia & crate::layout::inertia::KEEP_POSE != 0 {
            // The frame before an interrupting cross-fade writes its pose as the snapshot.
            own += j * pose;
        }
        // Masks of layers: one weight (16 B) per joint, shared by every character.
        for l in &list.layers {
            if l.mode != crate::layout::layer_mode::OFF && l.mask != crate::layout::NO_MASK {
                shared += j * 16;
            }
        }
        // Shared: skeleton header (three stages), parents, inverse binds.
        shared += 3 * sz(size_of::<GpuSkeleton>()) + j * (4 + matrix);
        // Sockets: each reads its definition (shared) and, on the staged path, its joint's
        // model matrix, and writes its matrix; the instance's world matrix is read once.
        let sockets = u64::from(skel.socket_count);
        if sockets > 0 {
            shared += sockets * sz(size_of::<crate::layout::GpuSocket>());
            own += matrix + sockets * matrix * if fused { 1 } else { 2 };
        }
        // Blend trees walked by clock.
        if inst.tree_nodes > 0 {
            shared += tree_bytes(inst.tree_offset, inst.tree_nodes);
        }
        if inst.source_kind() == crate::layout::source_kind::TREE {
            shared += tree_bytes(inst.source_tree_offset, inst.source_tree_nodes);
        }
        let mut total = 0.0;
        for e in &list.samples[..list.count.min(MAX_BLEND_CLIPS) as usize] {
            total += e.weight;
            if e.clip == SNAPSHOT_CLIP {
                own += j * pose;
                continue;
            }
            shared += sample_bytes(lib, inst, e, clip_times);
        }
        if total < MIN_BLEND_WEIGHT {
            shared += j * 3 * 16;
        }
    }
    let joints = joints.max(1) as f64;
    Traffic {
        per_character: own as f64 / joints,
        shared: shared as f64 / joints,
    }
}

/// The library bytes sampling `e` reads for `inst` (shared by the characters that play the clip):
/// the clip's header, read by clock and by sample (with CLIP_TIMES, also for its keys); with
/// CLIP_TIMES its key times, searched once; each joint's track headers and the keys around the
/// sample's time.
fn sample_bytes(lib: &AnimationLibrary, inst: &GpuInstance, e: &crate::layout::BlendSample, clip_times: bool) -> u64 {
    let mut shared = if clip_times { 3 } else { 2 } * size_of::<GpuClip>() as u64;
    let clip = &lib.clips()[e.clip as usize];
    let times = if clip_times {
        sample_times(lib, e.clip as usize)
    } else {
        None
    };
    if let Some((_, n)) = times {
        shared += size_of::<GpuTrack>() as u64 + span_bytes(n);
    }
    // A joint's track headers: with CLIP_TIMES in a library without compressed clips, its three
    // in one unit (`joint_tracks`, found from the clip's word once per character); else each
    // channel's own.
    let headers = if clip_times && !lib.has_compressed_clips() {
        shared += 4;
        16
    } else {
        3 * size_of::<GpuTrack>() as u64
    };
    for jj in 0..clip.joint_count.min(inst.joint_count) {
        shared += headers;
        for c in 0..3 {
            let track = &lib.tracks()[(clip.track_offset + 3 * jj + c) as usize];
            shared += key_bytes(lib, track, e.time, times);
        }
    }
    shared
}
