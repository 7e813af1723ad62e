//! What a state machine puts on the GPU: its definition in the library (states, transitions,
//! conditions, the candidate lists) and, per character, its parameters and its running state.
//! The semantics are the project's state-machine reference; the rules run in
//! [`crate::cpu::machine`].

use super::Ticks;

/// Parameter slots per character: every machine has at most this many parameters.
pub const MAX_MACHINE_PARAMETERS: u32 = 16;

/// No state, no transition, no parameter (a state's `speed_parameter` unset, a tree parameter
/// unbound) and no machine (a character without one).
pub const MACHINE_NONE: u32 = u32::MAX;

/// One normalized time unit (a whole loop of a state) in ticks: a machine's clocks count in
/// `2^-TICK_BITS` of a loop, as the clip clocks count in `2^-TICK_BITS` s.
pub const MACHINE_LOOP_TICKS: i64 = 1 << super::TICK_BITS;

/// `GpuMachineStateDef::flags` bit: the state's motion loops (else it stops at its end).
pub const MACHINE_STATE_LOOPS: u32 = 1;

/// `GpuMachineTransition::flags` bits and fields.
pub mod machine_transition {
    /// The transition has an exit time (`exit_time`).
    pub const HAS_EXIT: u32 = 1;
    /// `duration` is in seconds; without it, a fraction of the source motion's length.
    pub const FIXED_DURATION: u32 = 1 << 1;
    /// An `Any` transition may fire to the state playing (or the running destination).
    pub const TO_SELF: u32 = 1 << 2;
    /// Inertialized, not cross-faded.
    pub const INERTIALIZE: u32 = 1 << 3;
    /// A cross-fade shaped by smoothstep (else linear).
    pub const SMOOTH: u32 = 1 << 4;
    /// The interruption source (`INTERRUPT_*`) in bits 5–6.
    pub const INTERRUPT_SHIFT: u32 = 5;
    /// Not interruptible.
    pub const INTERRUPT_NONE: u32 = 0;
    /// Interrupted by the `Any` transitions, then the source state's.
    pub const INTERRUPT_SOURCE: u32 = 1;
    /// Interrupted by the `Any` transitions, then the destination state's.
    pub const INTERRUPT_DESTINATION: u32 = 2;
}

/// `GpuMachineCondition::op`: how a parameter slot is compared with the condition's value.
pub mod machine_condition {
    /// `Float > c` (strict).
    pub const FLOAT_GREATER: u32 = 0;
    /// `Float < c` (strict).
    pub const FLOAT_LESS: u32 = 1;
    /// `Int > c`.
    pub const INT_GREATER: u32 = 2;
    /// `Int < c`.
    pub const INT_LESS: u32 = 3;
    /// `Int == c`.
    pub const INT_EQUAL: u32 = 4;
    /// `Int != c`.
    pub const INT_NOT_EQUAL: u32 = 5;
    /// `Bool is true` (the slot is not 0).
    pub const TRUE: u32 = 6;
    /// `Bool is false` (the slot is 0).
    pub const FALSE: u32 = 7;
    /// `Trigger is set` (the slot is not 0); a fired transition clears it.
    pub const TRIGGER: u32 = 8;
}

wgsl_struct! {
    /// A state machine's header in the library. WGSL `Machine`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuMachine as "Machine" {
        /// Its first state in the library's state array.
        pub state_offset: u32,
        /// Its states.
        pub state_count: u32,
        /// Its first transition in the library's transition array (transition indices are
        /// relative to it, in authored order).
        pub transition_offset: u32,
        /// Its transitions.
        pub transition_count: u32,
        /// Its `Any` transitions' indices: `candidates[any_offset..][..any_count]`.
        pub any_offset: u32,
        /// How many `Any` transitions it has.
        pub any_count: u32,
        /// The state a character starts in (relative to `state_offset`).
        pub entry: u32,
        /// Parameters in use (the slots past them are 0).
        pub parameter_count: u32,
    }
}
const _: () = assert!(std::mem::size_of::<GpuMachine>() == 32);

wgsl_struct! {
    /// A state of a machine: its motion, speed and candidate transitions. WGSL `MachineStateDef`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuMachineStateDef as "MachineStateDef" {
        /// The clip played (when `tree_nodes` is 0).
        pub clip: u32,
        /// The blend tree's first node in the blend node array.
        pub tree_offset: u32,
        /// The blend tree's node count; 0 for a clip.
        pub tree_nodes: u32,
        /// [`MACHINE_STATE_LOOPS`].
        pub flags: u32,
        /// The state's speed (a rate: negative plays backward).
        pub speed: f32,
        /// A float parameter slot multiplying `speed`, or [`MACHINE_NONE`].
        pub speed_parameter: u32,
        /// Its transitions' indices: `candidates[candidate_offset..][..candidate_count]`.
        pub candidate_offset: u32,
        /// How many transitions leave it.
        pub candidate_count: u32,
        /// The parameter slot each of the tree's four blend parameters reads, or [`MACHINE_NONE`]
        /// (read as 0).
        pub tree_parameters: glam::UVec4,
    }
}
const _: () = assert!(std::mem::size_of::<GpuMachineStateDef>() == 48);

wgsl_struct! {
    /// A transition of a machine. WGSL `MachineTransition`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuMachineTransition as "MachineTransition" {
        /// The state it leaves, or [`MACHINE_NONE`] for `Any`.
        pub source: u32,
        /// The state it goes to.
        pub destination: u32,
        /// Its first condition in the library's condition array.
        pub condition_offset: u32,
        /// Its conditions (all must hold).
        pub condition_count: u32,
        /// The exit time, normalized (with [`machine_transition::HAS_EXIT`]).
        pub exit_time: f32,
        /// Seconds, or a fraction of the source motion's length (without
        /// [`machine_transition::FIXED_DURATION`]).
        pub duration: f32,
        /// The normalized time the destination starts at, in [0, 1].
        pub offset: f32,
        /// `machine_transition::*` bits and the interruption source.
        pub flags: u32,
    }
}
const _: () = assert!(std::mem::size_of::<GpuMachineTransition>() == 32);

wgsl_struct! {
    /// A condition of a transition. WGSL `MachineCondition`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuMachineCondition as "MachineCondition" {
        /// The parameter slot.
        pub parameter: u32,
        /// `machine_condition::*`.
        pub op: u32,
        /// The constant's bits: an `f32` for a float comparison, an `i32` for an int one.
        pub value: u32,
        /// Padding to a 16-byte unit of the library heap.
        pub _pad: u32,
    }
}
const _: () = assert!(std::mem::size_of::<GpuMachineCondition>() == 16);

wgsl_struct! {
    /// A character's machine as it runs: the state playing, the transition running and the two
    /// slots' clocks. Written by the CPU when a machine is set or reset, then by the rules each
    /// frame. WGSL `MachineState`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuMachineState as "MachineState" {
        /// The machine (an index into the library's machines), or [`MACHINE_NONE`].
        pub machine: u32,
        /// The state playing; while a transition runs, its source.
        pub current: u32,
        /// The running transition's destination, or [`MACHINE_NONE`].
        pub destination: u32,
        /// The running transition (its index in the machine), or [`MACHINE_NONE`].
        pub transition: u32,
        /// `current`'s normalized time, in [`MACHINE_LOOP_TICKS`] per loop, never wrapped.
        pub time: Ticks,
        /// The destination's normalized time while a transition runs.
        pub destination_time: Ticks,
        /// Seconds since the running transition fired (`2^-TICK_BITS` s ticks).
        pub progress: Ticks,
        /// The running transition's length in seconds, fixed when it fired.
        pub duration: f32,
        /// Transitions fired since the machine was set (modulo 2³²): the clock stage starts what
        /// a transition plays when it differs from the clock's `seq`.
        pub fired: u32,
        /// [`MACHINE_FROM_POSE`].
        pub flags: u32,
        /// Padding to four 16-byte units.
        pub _pad: [u32; 3],
    }
}
const _: () = assert!(std::mem::size_of::<GpuMachineState>() == 64);

/// `GpuMachineState::flags` bit: the running transition interrupted another, so it blends from
/// the pose shown on the frame it fired (kept as a snapshot), not from its source state.
pub const MACHINE_FROM_POSE: u32 = 1;

/// `GpuInstance::flags` bit: the character plays what its state machine decides (its page's
/// machine states section), not the instance's own clip, tree and transition.
pub const MACHINE: u32 = 1 << 19;

/// The `GpuInstance::flags` bits a character with a state machine keeps from its instance: root
/// motion, its layers, [`MACHINE`], and what a frame keeps for a transition the CPU holds back
/// to start from the pose shown ([`crate::gpu::Controller::play`] taking it off its machine);
/// the machine decides the rest (the transition's kind and curve, what its own transitions
/// keep).
pub const MACHINE_PLAYBACK_KEEPS: u32 = super::ROOT_MOTION
    | super::KEEP_POSE
    | super::KEEP_VELOCITY
    | super::VELOCITY_FROM_LAST_POSE
    | (super::LAYER_ON * ((1 << super::MAX_LAYERS) - 1))
    | (super::LAYER_MESH * ((1 << super::MAX_LAYERS) - 1))
    | MACHINE;

/// `GpuEventRecord::clip` of a state machine's event: `event` is its kind
/// (`machine_event::*`) and `state` the state or transition it names.
pub const MACHINE_EVENT_CLIP: u32 = 0xffff_fffe;

impl GpuMachineState {
    /// The state playing (while a transition runs, its source), relative to its machine; `None`
    /// without a machine.
    #[must_use]
    pub fn playing(&self) -> Option<u32> {
        (self.machine != MACHINE_NONE).then_some(self.current)
    }

    /// The playing state's normalized time: loops since it started at 0, not wrapped.
    #[must_use]
    pub fn normalized_time(&self) -> f64 {
        self.time.get() as f64 / MACHINE_LOOP_TICKS as f64
    }

    /// The transition running: its index, its destination and its weight
    /// (`min(1, progress / duration)`).
    #[must_use]
    pub fn running(&self) -> Option<(u32, u32, f32)> {
        if self.machine == MACHINE_NONE || self.transition == MACHINE_NONE {
            return None;
        }
        let weight = if self.duration > 0.0 {
            (self.progress.to_f32() / self.duration).min(1.0)
        } else {
            1.0
        };
        Some((self.transition, self.destination, weight))
    }

    /// A character of `machine` just set or reset: in `entry` at normalized time 0, no
    /// transition.
    #[must_use]
    pub fn entry(machine: u32, entry: u32) -> Self {
        Self {
            machine,
            current: entry,
            destination: MACHINE_NONE,
            transition: MACHINE_NONE,
            ..Self::default()
        }
    }
}

/// The kinds of a state machine's events (`crate::cpu::machine::MachineEvent::kind`), in the
/// order one frame emits them.
pub mod machine_event {
    /// A transition reached full weight: its destination is now the state playing.
    pub const STATE_ENTERED: u32 = 0;
    /// A transition reached full weight (or was of duration 0).
    pub const TRANSITION_ENDED: u32 = 1;
    /// A transition fired, leaving this state.
    pub const STATE_EXITED: u32 = 2;
    /// A transition fired.
    pub const TRANSITION_STARTED: u32 = 3;
    /// Names, by kind, as `wgpu-anim simulate` prints them.
    pub const NAMES: [&str; 4] = [
        "state_entered",
        "transition_ended",
        "state_exited",
        "transition_started",
    ];
}
