// Types and constants shared by every stage. Each struct here mirrors a Rust type in
// src/layout.rs (named in its comment); tests/shaders.rs checks the two layouts against each
// other. Most shared structs are not written here at all: they are declared once, in Rust
// (`wgsl_struct!`), and their WGSL is appended to this module (layout::generated): Affine,
// DualQuat, Socket, IkChain, Frame, Ticks, Clock, BlendSample, LayerApply, BlendList, LocalPose,
// Layer, Instance, LayerDef, Track, EventRecord, LibraryLayout, BlendTree, BlendNode,
// BlendChild, Output, and the renderers' Camera and SkinView. Their docs are the Rust ones.

// Threads per workgroup. Rust: layout::WORKGROUP_SIZE.
const WORKGROUP_SIZE: u32 = 64u;

// Interpolation codes. Rust: Interpolation::gpu_code.
const INTERP_STEP: u32 = 0u;
const INTERP_LINEAR: u32 = 1u;
const INTERP_CUBIC: u32 = 2u;
// A track in a compressed clip's packed blob. Rust: layout::INTERP_PACKED.
const INTERP_PACKED: u32 = 3u;

// Loop modes. Rust: layout::LOOP_*.
const LOOP_ONCE: u32 = 0u;
const LOOP_REPEAT: u32 = 1u;
const LOOP_FOREVER: u32 = 2u;

// A cubic rotation spline whose squared length is not above this has no direction; the keys'
// own interpolation stands in. Rust: math::CUBIC_ROTATION_MIN_LENGTH2.
const CUBIC_ROTATION_MIN_LENGTH2: f32 = 1e-12;

// Frame.flags bits: detect clip events, blend float curves, keep dual quaternions (Rust:
// layout::FRAME_EVENTS, FRAME_CURVES, FRAME_DUAL_QUATERNION).
const FRAME_EVENTS: u32 = 1u;
const FRAME_CURVES: u32 = 2u;
const FRAME_DUAL_QUATERNION: u32 = 4u;
// Frame.flags bits of culling (Rust: layout::FRAME_CULL, FRAME_CULL_VIEW): the later stages run
// over the page's list of evaluated characters; the clock tests each against the view.
const FRAME_CULL: u32 = 8u;
const FRAME_CULL_VIEW: u32 = 16u;
// Output.evaluate bits (Rust: layout::MARK_EVALUATE, MARK_DRAWN, MARK_ENTERED).
const MARK_EVALUATE: u32 = 1u;
const MARK_DRAWN: u32 = 2u;
const MARK_ENTERED: u32 = 4u;
// Frame.flags bit: held characters drawn with an interpolation of two key palettes (Rust:
// layout::FRAME_LOD_INTERPOLATE).
const FRAME_LOD_INTERPOLATE: u32 = 32u;
// Frame.flags bit: small characters that play alone a clip their VAT holds are drawn with it
// (Rust: layout::FRAME_VAT); Output.evaluate bit of those (layout::MARK_VAT).
const FRAME_VAT: u32 = 64u;
const MARK_VAT: u32 = 8u;
// Output.evaluate: the update rate of a character drawn skinned, log2, in the two bits from this
// one (Rust: layout::MARK_RATE_SHIFT).
const MARK_RATE_SHIFT: u32 = 4u;

// Rust: layout::GpuVisibleHead, then the lists from layout::VISIBLE_LIST_OFFSET: the characters
// of a page evaluated this frame, then from `drawn_offset` (the page's capacity) those drawn
// skinned, from entry 2 * drawn_offset - 1 backwards those drawn with their VAT, then from
// 2 * drawn_offset every instance's marks (Output.evaluate); written by the cull stage.
struct Visible {
    instance_groups: vec4<u32>,
    thread_groups: vec4<u32>,
    count: u32,
    drawn_count: u32,
    drawn_offset: u32,
    vat_count: u32,
    drawn_groups: vec4<u32>,
    list: array<u32>,
}
// Most workgroups per dimension of the dispatches the cull stage sizes. Rust:
// layout::CULL_MAX_WORKGROUPS.
const CULL_MAX_WORKGROUPS: u32 = 65535u;

// IK (Rust: layout::IK_ON, MAX_IK_CHAINS, MAX_AIM_JOINTS, NO_JOINT, ik_kind::*, ik_target::*).
const IK_ON: u32 = 1u;
const MAX_IK_CHAINS: u32 = 4u;
const MAX_AIM_JOINTS: u32 = 4u;
const NO_JOINT: u32 = 0xffffffffu;
const IK_TWO_BONE: u32 = 1u;
const IK_AIM: u32 = 2u;
const IK_TARGET_MODEL: u32 = 0u;
const IK_TARGET_WORLD: u32 = 1u;
const IK_TARGET_LOOK_AT: u32 = 2u;
const IK_TARGET_GROUND: u32 = 3u;

// Rust: layout::GpuClip.
struct ClipInfo {
    skeleton: u32,
    joint_count: u32,
    track_offset: u32,
    flags: u32,
    duration: f32,
    event_offset: u32,
    event_count: u32,
    root_track: u32,
}

// ClipInfo.root_track of a clip without root motion (Rust: layout::NO_ROOT_MOTION).
const NO_ROOT_MOTION: u32 = 0xffffffffu;

// Rust: layout::GpuOutput (what the clock stage keeps per character, its root motion and
// curves, and the IK stage's reached chains) is declared in Rust and its WGSL appended to this module: shaders::types_source.

// Most float curve names of a library (Rust: layout::MAX_CURVES), and where a clip's curve mask
// starts in its flags (layout::CLIP_CURVE_SHIFT).
const MAX_CURVES: u32 = 8u;
const CLIP_CURVE_SHIFT: u32 = 8u;
// Where a clip's morph-weight track count starts in its flags (layout::CLIP_MORPH_SHIFT).
const CLIP_MORPH_SHIFT: u32 = 16u;

// Rust: layout::GpuEvent. A clip event, one header unit.
struct ClipEvent {
    time: f32,
    name: u32,
    threshold: f32,
    pad: u32,
}

// The event log the clock stage appends to (Rust: layout::GpuEventLogHead, then the records):
// `count` counts every record appended, those past the capacity too; `overflow` those.
struct EventLog {
    count: atomic<u32>,
    overflow: atomic<u32>,
    pad_a: u32,
    pad_b: u32,
    records: array<EventRecord>,
}

// Rust: layout::GpuSkeleton.
struct SkeletonInfo {
    joint_count: u32,
    joint_offset: u32,
    rest_offset: u32,
    socket_count: u32,
}

// Polar decomposition. Rust: math::POLAR_ITERATIONS, POLAR_TOLERANCE, POLAR_FLAT_DET,
// POLAR_MIN_COFACTOR.
const POLAR_ITERATIONS: u32 = 16u;
const POLAR_TOLERANCE: f32 = 1e-6;
const POLAR_FLAT_DET: f32 = 1e-4;
const POLAR_MIN_COFACTOR: f32 = 1e-6;

// Transition source kinds and instance flags. Rust: layout::source_kind, TRANSITION_*,
// KEEP_POSE, KEEP_VELOCITY, LAYER_ON, LAYER_MESH, SNAPSHOT_CLIP.
const SOURCE_NONE: u32 = 0u;
const SOURCE_CLIP: u32 = 1u;
const SOURCE_TREE: u32 = 2u;
const SOURCE_SNAPSHOT: u32 = 3u;
const SOURCE_OFFSET: u32 = 4u;
const TRANSITION_SMOOTH: u32 = 16u;
const TRANSITION_FROZEN: u32 = 32u;
const KEEP_POSE: u32 = 64u;
const KEEP_VELOCITY: u32 = 65536u;
const VELOCITY_FROM_LAST_POSE: u32 = 262144u;
const TRANSITION_DEAD_BLEND: u32 = 131072u;
const ROOT_MOTION: u32 = 128u;
const LAYER_ON: u32 = 256u;
const LAYER_MESH: u32 = 4096u;
const SNAPSHOT_CLIP: u32 = 0xffffffffu;

// State machines. Rust: layout::MACHINE, MACHINE_PLAYBACK_KEEPS, MAX_MACHINE_PARAMETERS,
// MACHINE_NONE, MACHINE_STATE_LOOPS, MACHINE_FROM_POSE, MACHINE_EVENT_CLIP, machine_event,
// machine_transition, machine_condition.
const MACHINE: u32 = 524288u;
const MACHINE_PLAYBACK_KEEPS: u32 = 0xd77c0u;
const MAX_MACHINE_PARAMETERS: u32 = 16u;
const MACHINE_NONE: u32 = 0xffffffffu;
const MACHINE_STATE_LOOPS: u32 = 1u;
const MACHINE_FROM_POSE: u32 = 1u;
const MACHINE_EVENT_CLIP: u32 = 0xfffffffeu;
const MACHINE_EVENT_STATE_ENTERED: u32 = 0u;
const MACHINE_EVENT_TRANSITION_ENDED: u32 = 1u;
const MACHINE_EVENT_STATE_EXITED: u32 = 2u;
const MACHINE_EVENT_TRANSITION_STARTED: u32 = 3u;
const MACHINE_TRANSITION_HAS_EXIT: u32 = 1u;
const MACHINE_TRANSITION_FIXED_DURATION: u32 = 2u;
const MACHINE_TRANSITION_TO_SELF: u32 = 4u;
const MACHINE_TRANSITION_INERTIALIZE: u32 = 8u;
const MACHINE_TRANSITION_SMOOTH: u32 = 16u;
const MACHINE_TRANSITION_INTERRUPT_SHIFT: u32 = 5u;
const MACHINE_TRANSITION_INTERRUPT_SOURCE: u32 = 1u;
const MACHINE_TRANSITION_INTERRUPT_DESTINATION: u32 = 2u;
const MACHINE_CONDITION_FLOAT_GREATER: u32 = 0u;
const MACHINE_CONDITION_FLOAT_LESS: u32 = 1u;
const MACHINE_CONDITION_INT_GREATER: u32 = 2u;
const MACHINE_CONDITION_INT_LESS: u32 = 3u;
const MACHINE_CONDITION_INT_EQUAL: u32 = 4u;
const MACHINE_CONDITION_INT_NOT_EQUAL: u32 = 5u;
const MACHINE_CONDITION_TRUE: u32 = 6u;
const MACHINE_CONDITION_FALSE: u32 = 7u;
const MACHINE_CONDITION_TRIGGER: u32 = 8u;

// Fractional bits of a clock's fixed-point time: a tick is 2^-40 s, or 2^-40 of a tree's cycle.
const TICK_BITS: u32 = 40u;
// High word of the largest clock time, 2^61 ticks.
const TICK_LIMIT_HI: u32 = 0x20000000u;

// BlendList.inertia bits and the layer tag of samples at the previous frame's times. Rust:
// layout::inertia::*.
const INERTIA_OFFSET: u32 = 1u;
const INERTIA_DEAD_BLEND: u32 = 2u;
const INERTIA_SWITCH: u32 = 4u;
const INERTIA_VELOCITY: u32 = 8u;
const INERTIA_PREVIOUS: u32 = 16u;
const INERTIA_LAST_POSE: u32 = 32u;
const INERTIA_KEEP_POSE: u32 = 64u;
const PREVIOUS_TAG: u32 = 4u;

// Blend trees. Rust: layout::MAX_* and layout::node_kind.
const MAX_BLEND_CHILDREN: u32 = 16u;
const MAX_TREE_NODES: u32 = 32u;
const MAX_BLEND_CLIPS: u32 = 16u;
const MAX_LAYERS: u32 = 3u;
const MAX_LAYER_DEFS: u32 = 1024u;
// Most joints of a skeleton the fused stage handles. Rust: layout::MAX_FUSED_JOINTS.
const MAX_FUSED_JOINTS: u32 = 128u;
// Sockets per skeleton. Rust: layout::MAX_SOCKETS.
const MAX_SOCKETS: u32 = 4u;

// Layer modes. Rust: layout::layer_mode, NO_MASK, NO_TIME_PARAMETER.
const LAYER_OFF: u32 = 0u;
const LAYER_OVERRIDE: u32 = 1u;
const LAYER_ADDITIVE_LOCAL: u32 = 2u;
const LAYER_ADDITIVE_MESH: u32 = 3u;
const NO_MASK: u32 = 0xffffffffu;
const NO_TIME_PARAMETER: u32 = 0xffffffffu;
// A retarget joint's source joint when none drives it, and the retarget root's flag. Rust:
// layout::RETARGET_UNMAPPED, RETARGET_ROOT.
const RETARGET_UNMAPPED: u32 = 0xffffffffu;
const RETARGET_ROOT: u32 = 1u;
// How the heap packs a retarget joint's word. Rust: layout::RETARGET_WORD_*.
const RETARGET_WORD_SOURCE: u32 = 0xffffu;
const RETARGET_WORD_LINKS_SHIFT: u32 = 16u;
const RETARGET_WORD_ROOT: u32 = 0x1000000u;
const RETARGET_WORD_SCALED: u32 = 0x2000000u;
const NODE_CLIP: u32 = 0u;
const NODE_BLEND_1D: u32 = 1u;
const NODE_BILINEAR: u32 = 2u;
const NODE_TRIANGLE: u32 = 3u;
const NODE_DELAUNAY: u32 = 4u;
const NODE_SIMPLE_DIRECTIONAL: u32 = 5u;
const NODE_FREEFORM_CARTESIAN: u32 = 6u;
const NODE_FREEFORM_DIRECTIONAL: u32 = 7u;
const NODE_DIRECT: u32 = 8u;

// Below this total weight, the sample stage fills the missing weight with the rest pose.
// Rust: layout::MIN_BLEND_WEIGHT.
const MIN_BLEND_WEIGHT: f32 = 0.001;
