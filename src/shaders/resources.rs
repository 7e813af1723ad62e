//! The animation passes' resources: every buffer a stage binds, where it lives, how big a
//! page's is, and what of it survives a lost device (the binding table, [`Resource::ALL`]).

use super::{Entry, PageOptions, Scope, Section, Sections, Survival};

/// A resource of the animation passes. Every stage that uses it binds it at the same binding
/// number (group 0) under the same name; [`Stage::bindings`](super::Stage::bindings) says which stages use it and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    /// The per-frame uniform (`Frame`, Rust `layout::GpuFrame`).
    Frame,
    /// Where the library heap's sections start (`LibraryLayout`, uniform).
    Library,
    /// The animator's layer definitions (`array<LayerDef, MAX_LAYER_DEFS>`, uniform).
    LayerDefs,
    /// The library's heap: every section of the library, read-only (`array<vec4<u32>>`, Rust
    /// [`crate::gpu::LibraryHeap`]).
    Heap,
    /// Per instance: `Instance`.
    Instances,
    /// Per instance, what the clock stage keeps and gives back (`array<vec4<u32>>` in
    /// sections, read and written through `shaders/shared/state.wgsl`): every instance's
    /// `Clock` (64 B) from byte 0, then from [`crate::layout::outputs_offset`] (`Frame::output_base`
    /// in 16-byte units) its `Output` (128 B: root motion, float curves).
    CharacterState,
    /// Per instance: `BlendList` (320 B), a section of the page's [`Resource::CharacterState`]
    /// buffer after its outputs ([`Resource::sections`]; WGSL `blend_lists_base()`), which the clock
    /// stage writes and the sample stage reads through `shaders/shared/state.wgsl`.
    BlendLists,
    /// Per joint: `LocalPose`, the current poses the sample stage writes and the local_to_model
    /// stage reads, then (with [`PageOptions::layers`]) as many mesh-space additive deltas
    /// (from `Frame::snapshot_offset`, the page's joint capacity).
    LocalPoses,
    /// Per joint: `Affine` model matrices.
    ModelPoses,
    /// Per joint: `Affine` skinning matrices (bound as 16-byte units, `array<vec4<f32>>`, so that
    /// the dual quaternions' section shares the buffer); the same bytes as `array<Affine>` for a
    /// renderer that binds the palettes.
    Palettes,
    /// Per joint: `DualQuat` skinning dual quaternions ([`crate::math::DualQuat`]), written for
    /// the instances that skin with them when the animator keeps them
    /// ([`crate::gpu::AnimatorDesc::dual_quaternion`]). A section of the page's
    /// [`Resource::Palettes`] buffer, after the palettes, socket matrices and key palettes
    /// ([`Resource::sections`]; WGSL `dual_palettes_base()`).
    DualPalettes,
    /// Per instance: its morph weights (`array<f32>`, [`crate::gpu::AnimatorDesc::morph_weights`]
    /// each, from `Instance::morph_offset`), which the skinning module's `wgpu_anim_morph` reads
    /// in a vertex shader; then from `Frame::morph_api_base` the instances' own
    /// ([`crate::gpu::Controller::set_morph_weights`]); then from twice that the weights kept
    /// as the snapshot an interrupting cross-fade blends from. Without clips that drive weights
    /// the CPU writes the first part; with them (shader define `MORPH`) the CPU writes the
    /// second and the sample stage (and the fused one) blends the first from it, the clips'
    /// tracks and the snapshot, and writes the snapshot on a frame that keeps the pose. A section
    /// of the page's [`Resource::CharacterState`] buffer, after the blend lists
    /// ([`Resource::sections`]; WGSL `morph_weights_base()`).
    MorphWeights,
    /// The event log (`EventLog`): an atomic count and the records the clock stage appends.
    Events,
    /// Per instance: its state machine as it runs (`MachineState`, 64 B: the state playing, the
    /// transition running, the two slots' normalized clocks; [`crate::layout::GpuMachineState`]),
    /// which the CPU writes when it sets or resets a machine and the clock stage (for characters
    /// with [`crate::layout::MACHINE`]) reads and writes every frame. A section of the page's
    /// [`Resource::CharacterState`] buffer after the blend lists (WGSL `machine_states_base()`).
    MachineStates,
    /// Per instance: its state machine's parameter slots (`array<u32, 16>` each, 64 B: an `f32`,
    /// an `i32` or 0/1 by the parameter's kind), which the CPU writes slot by slot
    /// ([`crate::gpu::Controller::set_parameter`]), a user's compute pass may write before the
    /// clock pass, and the clock stage reads (and clears the triggers a transition consumes). A
    /// section of the page's [`Resource::CharacterState`] buffer after the machine states (WGSL
    /// `machine_parameters_base()`).
    MachineParameters,
    /// Per instance: with culling ([`crate::gpu::AnimatorDesc::culling`]), the page's list of
    /// the characters evaluated this frame (`Visible`: a [`crate::layout::GpuVisibleHead`] —
    /// the indirect dispatch arguments and the count — then a `u32` page index each), which the
    /// cull stage writes and the later stages, the indirect dispatches and a culled draw read.
    /// Without culling, bound and never written.
    Visible,
    /// Per joint: `LocalPose`, what a character's pose keeps from frame to frame for its
    /// transitions: the snapshots interrupted cross-fades blend from (and an inertialized
    /// transition's kept pose or decaying offset), then (with [`PageOptions::inertialization`])
    /// as many velocities (from `Frame::snapshot_offset`). Apart from the current poses, so
    /// that a page's largest buffer holds one pose per joint and a page twice the characters,
    /// and the fused stage, which keeps the current pose in workgroup memory, binds only this.
    PoseHistory,
}

/// The most sections ([`Resource::is_section`]) the frame carries bases for
/// ([`Resource::section_bases`]).
pub const MAX_SECTIONS: usize = 8;
const _: () = {
    let mut sections = 0;
    let mut k = 0;
    while k < Resource::ALL.len() {
        if Resource::ALL[k].is_section() {
            sections += 1;
        }
        k += 1;
    }
    assert!(sections <= MAX_SECTIONS, "more sections than GpuFrame::sections holds");
};

impl Resource {
    /// Every resource, by binding number.
    pub const ALL: [Resource; 17] = [
        Resource::Frame,
        Resource::Library,
        Resource::LayerDefs,
        Resource::Heap,
        Resource::Instances,
        Resource::CharacterState,
        Resource::BlendLists,
        Resource::LocalPoses,
        Resource::ModelPoses,
        Resource::Palettes,
        Resource::Events,
        Resource::DualPalettes,
        Resource::MorphWeights,
        Resource::Visible,
        Resource::PoseHistory,
        Resource::MachineStates,
        Resource::MachineParameters,
    ];

    /// Its entry in the binding table: every fact of it that is not a size.
    #[must_use]
    pub const fn entry(self) -> Entry {
        use super::Access::{Read, ReadWrite, Uniform};
        use super::Stage::{Clock, Cull, Fused, Ik, LocalToModel, Palette, Sample};
        use crate::layout::{
            BlendList, GpuEventLogHead, GpuEventRecord, GpuFrame, GpuInstance, GpuLayerDef, GpuLibraryLayout,
            LocalPose, MAX_LAYER_DEFS, VISIBLE_LIST_OFFSET,
        };
        use crate::math::{Affine, DualQuat};
        use wgpu::BufferUsages;
        // What most entries share: a storage buffer per page, recomputed every frame.
        let page = Entry {
            name: "",
            wgsl_type: "",
            min_binding_size: 0,
            uniform: false,
            scope: Scope::Page,
            stages: &[],
            sections: &[],
            extra_usage: BufferUsages::empty(),
            read_back: false,
            survival: Survival::Recomputed,
        };
        let from_cpu = Entry {
            survival: Survival::FromCpu,
            ..page
        };
        match self {
            Resource::Frame => Entry {
                name: "frame",
                wgsl_type: "Frame",
                min_binding_size: size_of::<GpuFrame>() as u64,
                stages: &[
                    (Clock, Uniform),
                    (Cull, Uniform),
                    (Sample, Uniform),
                    (LocalToModel, Uniform),
                    (Ik, Uniform),
                    (Palette, Uniform),
                    (Fused, Uniform),
                ],
                uniform: true,
                scope: Scope::Frame,
                ..from_cpu
            },
            Resource::Library => Entry {
                name: "library",
                wgsl_type: "LibraryLayout",
                min_binding_size: size_of::<GpuLibraryLayout>() as u64,
                stages: &[
                    (Clock, Uniform),
                    (Sample, Uniform),
                    (LocalToModel, Uniform),
                    (Ik, Uniform),
                    (Palette, Uniform),
                    (Fused, Uniform),
                ],
                uniform: true,
                scope: Scope::Library,
                ..from_cpu
            },
            Resource::LayerDefs => Entry {
                name: "layer_defs",
                wgsl_type: "array<LayerDef, MAX_LAYER_DEFS>",
                min_binding_size: (MAX_LAYER_DEFS as usize * size_of::<GpuLayerDef>()) as u64,
                stages: &[(Clock, Uniform)],
                uniform: true,
                scope: Scope::Animator,
                ..from_cpu
            },
            Resource::Heap => Entry {
                name: "heap",
                wgsl_type: "array<vec4<u32>>",
                min_binding_size: 16,
                stages: &[
                    (Clock, Read),
                    (Sample, Read),
                    (LocalToModel, Read),
                    (Ik, Read),
                    (Palette, Read),
                    (Fused, Read),
                ],
                scope: Scope::Library,
                ..from_cpu
            },
            Resource::Instances => Entry {
                name: "instances",
                wgsl_type: "array<Instance>",
                min_binding_size: size_of::<GpuInstance>() as u64,
                stages: &[
                    (Clock, ReadWrite),
                    (Sample, Read),
                    (LocalToModel, Read),
                    (Ik, Read),
                    (Palette, Read),
                    (Fused, Read),
                ],
                ..from_cpu
            },
            Resource::CharacterState => Entry {
                name: "character_state",
                wgsl_type: "array<vec4<u32>>",
                min_binding_size: 16,
                stages: &[
                    (Clock, ReadWrite),
                    (Cull, Read),
                    (Sample, ReadWrite),
                    (Ik, ReadWrite),
                    (Palette, Read),
                    (Fused, ReadWrite),
                ],
                sections: &[
                    Resource::BlendLists,
                    Resource::MachineStates,
                    Resource::MachineParameters,
                    Resource::MorphWeights,
                ],
                read_back: true,
                survival: Survival::Checkpointed,
                ..page
            },
            Resource::BlendLists => Entry {
                name: "blend_lists",
                wgsl_type: "array<BlendList>",
                min_binding_size: size_of::<BlendList>() as u64,
                ..page
            },
            Resource::MachineStates => Entry {
                name: "machine_states",
                wgsl_type: "array<MachineState>",
                min_binding_size: size_of::<crate::layout::GpuMachineState>() as u64,
                read_back: true,
                survival: Survival::Checkpointed,
                ..page
            },
            Resource::MachineParameters => Entry {
                name: "machine_parameters",
                wgsl_type: "array<array<u32, MAX_MACHINE_PARAMETERS>>",
                min_binding_size: crate::layout::MAX_MACHINE_PARAMETERS as u64 * 4,
                survival: Survival::Checkpointed,
                ..page
            },
            // The fused stage binds the local poses only with THREAD_PER_CHARACTER
            // (gpu::CharacterThreads::One), each thread keeping its character's pose there.
            Resource::LocalPoses => Entry {
                name: "local_poses",
                wgsl_type: "array<LocalPose>",
                min_binding_size: size_of::<LocalPose>() as u64,
                stages: &[(Sample, ReadWrite), (LocalToModel, ReadWrite), (Fused, ReadWrite)],
                survival: Survival::PosesCheckpointed,
                ..page
            },
            Resource::ModelPoses => Entry {
                name: "model_poses",
                wgsl_type: "array<Affine>",
                min_binding_size: size_of::<Affine>() as u64,
                stages: &[(LocalToModel, ReadWrite), (Ik, ReadWrite), (Palette, Read)],
                ..page
            },
            // Affine palettes, then the dual quaternions' section: 16-byte units
            // (`load_palette`, `store_palette`, `store_dual_palette` in `shaders/palette.wgsl`);
            // also a vertex buffer, for a renderer that reads them as instance attributes.
            Resource::Palettes => Entry {
                name: "palettes",
                wgsl_type: "array<vec4<f32>>",
                min_binding_size: 16,
                stages: &[(Palette, ReadWrite), (Fused, ReadWrite)],
                sections: &[Resource::DualPalettes],
                extra_usage: BufferUsages::VERTEX,
                read_back: true,
                ..page
            },
            Resource::Events => Entry {
                name: "event_log",
                wgsl_type: "EventLog",
                min_binding_size: (size_of::<GpuEventLogHead>() + size_of::<GpuEventRecord>()) as u64,
                stages: &[(Clock, ReadWrite)],
                scope: Scope::Animator,
                read_back: true,
                ..page
            },
            Resource::DualPalettes => Entry {
                name: "dual_palettes",
                wgsl_type: "array<DualQuat>",
                min_binding_size: size_of::<DualQuat>() as u64,
                ..page
            },
            // The morph weights' snapshots are checkpointed, and so are the instances' own
            // weights (where the CPU writes them: `Controller::own_morph_offset`, which the
            // checkpoint copies beside the snapshots); the weights drawn are recomputed.
            Resource::MorphWeights => Entry {
                name: "morph_weights",
                wgsl_type: "array<f32>",
                min_binding_size: 4,
                survival: Survival::SnapshotsCheckpointed,
                ..page
            },
            // The head and one index, the struct's size rounded to its 16-byte alignment; the
            // indirect dispatches' arguments.
            Resource::Visible => Entry {
                name: "visible",
                wgsl_type: "Visible",
                min_binding_size: (VISIBLE_LIST_OFFSET + 4).next_multiple_of(16),
                stages: &[
                    (Cull, ReadWrite),
                    (Sample, Read),
                    (LocalToModel, Read),
                    (Ik, Read),
                    (Palette, Read),
                ],
                extra_usage: BufferUsages::INDIRECT,
                ..page
            },
            Resource::PoseHistory => Entry {
                name: "pose_history",
                wgsl_type: "array<LocalPose>",
                min_binding_size: size_of::<LocalPose>() as u64,
                stages: &[(Sample, ReadWrite), (Fused, ReadWrite)],
                survival: Survival::SnapshotsCheckpointed,
                ..page
            },
        }
    }

    /// Binding number in group 0.
    #[must_use]
    pub fn binding(self) -> u32 {
        Self::ALL.iter().position(|&r| r == self).unwrap_or(0) as u32
    }

    /// The sections its page buffer holds after its own data, in buffer order, each from a
    /// 256-byte boundary ([`crate::layout::SECTION_ALIGNMENT`]): the blend lists and the morph
    /// weights in the character state, the dual quaternions in the palettes. A section has no
    /// binding of its own, so that every stage leaves [`crate::shaders::STORAGE_SLOTS_SPARE`]
    /// slots free: stages bind its home ([`Resource::home`]) and find it from the frame
    /// ([`Resource::section_bases`]). Listing a resource here is all it takes to make it a
    /// section: its place, its home's size, its frame base and its WGSL accessor
    /// (`<name>_base()`, in `wgpu_anim::bindings`) follow.
    #[must_use]
    pub const fn sections(self) -> &'static [Resource] {
        self.entry().sections
    }

    /// The resource whose buffer holds it: itself, or, for a section of another page buffer
    /// ([`Resource::sections`]), that buffer's resource.
    #[must_use]
    pub const fn home(self) -> Resource {
        let mut k = 0;
        while k < Self::ALL.len() {
            let sections = Self::ALL[k].sections();
            let mut s = 0;
            while s < sections.len() {
                if sections[s] as u8 == self as u8 {
                    return Self::ALL[k];
                }
                s += 1;
            }
            k += 1;
        }
        self
    }

    /// Whether it is a section of another resource's buffer ([`Resource::home`]).
    #[must_use]
    pub const fn is_section(self) -> bool {
        self as u8 != self.home() as u8
    }

    /// Its slot among the sections (every [`Resource::is_section`] resource, in
    /// [`Resource::ALL`]'s order), where the frame carries its base ([`Resource::section_bases`],
    /// `GpuFrame::sections`); `None` for a resource that is not a section.
    #[must_use]
    pub const fn section_slot(self) -> Option<usize> {
        let mut slot = 0;
        let mut k = 0;
        while k < Self::ALL.len() {
            if Self::ALL[k] as u8 == self as u8 {
                return if self.is_section() { Some(slot) } else { None };
            }
            if Self::ALL[k].is_section() {
                slot += 1;
            }
            k += 1;
        }
        None
    }

    /// Where every section starts in its home's page buffer, in 16-byte units, at its
    /// [`Resource::section_slot`] (the `GpuFrame::sections` of a page of `instances` instances
    /// and `joints` joints); the slots of no section are 0.
    #[must_use]
    pub const fn section_bases(instances: u32, joints: u32, options: PageOptions) -> [glam::UVec4; 2] {
        let mut bases = [0u32; MAX_SECTIONS];
        let mut k = 0;
        while k < Self::ALL.len() {
            if let (Some(slot), Some((offset, _))) = (
                Self::ALL[k].section_slot(),
                Self::ALL[k].place(instances, joints, options),
            ) {
                bases[slot] = (offset / 16) as u32;
            }
            k += 1;
        }
        [
            glam::UVec4::new(bases[0], bases[1], bases[2], bases[3]),
            glam::UVec4::new(bases[4], bases[5], bases[6], bases[7]),
        ]
    }

    /// Where it lies in its home's page buffer ([`Resource::home`]) for a page of `instances`
    /// instances and `joints` joints: its first byte and its bytes (0 and the whole buffer for a
    /// resource that is its own home). `None` for a resource that is not per page.
    #[must_use]
    pub const fn place(self, instances: u32, joints: u32, options: PageOptions) -> Option<(u64, u64)> {
        let home = self.home();
        if home as u8 == self as u8 {
            return match self.page_bytes(instances, joints, options) {
                Some(bytes) => Some((0, bytes)),
                None => None,
            };
        }
        let Some(mut offset) = home.data_bytes(instances, joints, options) else {
            return None;
        };
        let sections = home.sections();
        let mut s = 0;
        while s < sections.len() {
            offset = offset.next_multiple_of(crate::layout::SECTION_ALIGNMENT);
            let Some(bytes) = sections[s].data_bytes(instances, joints, options) else {
                return None;
            };
            if sections[s] as u8 == self as u8 {
                return Some((offset, bytes));
            }
            offset += bytes;
            s += 1;
        }
        None
    }

    /// Where a section that holds a value per instance starts in a page of `capacity`
    /// instances: its [`Resource::place`], which does not depend on the [`PageOptions`] (the
    /// sections before it in its home are per instance too; a unit test checks it), so that
    /// [`Resource::instance_sections`] and the checkpoints know it from the capacity alone.
    const fn offset_of_instance_section(self, capacity: u32) -> u64 {
        match self.place(capacity, 0, PageOptions::NONE) {
            Some((offset, _)) => offset,
            None => 0,
        }
    }

    /// The WGSL variable's name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        self.entry().name
    }

    /// The WGSL variable's type; for a section ([`Resource::is_section`]), the type a binding of
    /// the section alone declares (as the skinning module binds the morph weights and the dual
    /// quaternions).
    #[must_use]
    pub const fn wgsl_type(self) -> &'static str {
        self.entry().wgsl_type
    }

    /// The least bytes a binding of it holds: its WGSL type's size, with one element of a
    /// runtime-sized array (as WebGPU's minimum binding size counts it). The bind group layouts
    /// declare it (`min_binding_size`), so that a buffer too small is refused when its bind group
    /// is made rather than checked at every dispatch; `tests/shaders.rs` checks it against naga's
    /// layout of [`Resource::wgsl_type`].
    #[must_use]
    pub const fn min_binding_size(self) -> u64 {
        self.entry().min_binding_size
    }

    /// Whether it is a uniform buffer (else a storage buffer).
    #[must_use]
    pub const fn is_uniform(self) -> bool {
        self.entry().uniform
    }

    /// Where its buffer lives: what the animator binds for it ([`crate::gpu::Animator`] makes
    /// one buffer per page of every [`Scope::Page`] resource from this table, sized by
    /// [`Resource::page_bytes`], and binds each stage's entries by it).
    #[must_use]
    pub const fn scope(self) -> Scope {
        self.entry().scope
    }

    /// The per-instance sections of its page buffer in a page of `capacity` instances, in buffer
    /// order: where each starts and its bytes per instance. Empty for a resource that is not per
    /// instance (per joint, or not per page).
    ///
    /// - [`Resource::Instances`]: one section, every `Instance` (320 B) from byte 0;
    /// - [`Resource::CharacterState`]: two, every `Clock` (64 B) from byte 0, then every
    ///   `Output` (128 B) from [`crate::layout::outputs_offset`] (the clocks' end rounded up to
    ///   256 B);
    /// - [`Resource::BlendLists`]: one, every `BlendList` (320 B) from its place in the
    ///   character state's buffer (its home, [`Resource::place`]);
    /// - [`Resource::Visible`]: three, the `u32` page indices of the evaluated instances from
    ///   [`crate::layout::VISIBLE_LIST_OFFSET`], after the head, then those of the drawn ones
    ///   (the VAT list shares their room, from its end backwards), then every instance's marks
    ///   ([`crate::layout::GpuVisibleHead`]).
    ///
    /// A resource that survives a lost device by checkpoints ([`Survival::Checkpointed`]) is
    /// copied back section by section, for the instances in use, and written back the same way
    /// ([`crate::gpu::Animator::set_recovery`]): the sections are all a checkpoint needs to know
    /// of it. Offsets are in the home's buffer ([`Resource::home`]).
    #[must_use]
    pub const fn instance_sections(self, capacity: u32) -> Sections {
        use crate::layout::{BlendList, GpuClock, GpuInstance, GpuOutput};
        match self {
            Resource::Instances => Sections::one(Section::from_start(size_of::<GpuInstance>())),
            Resource::CharacterState => Sections::two(
                Section::from_start(size_of::<GpuClock>()),
                Section {
                    offset: crate::layout::outputs_offset(capacity),
                    stride: size_of::<GpuOutput>() as u64,
                },
            ),
            Resource::BlendLists => Sections::one(Section {
                offset: Resource::BlendLists.offset_of_instance_section(capacity),
                stride: size_of::<BlendList>() as u64,
            }),
            Resource::MachineStates => Sections::one(Section {
                offset: Resource::MachineStates.offset_of_instance_section(capacity),
                stride: size_of::<crate::layout::GpuMachineState>() as u64,
            }),
            Resource::MachineParameters => Sections::one(Section {
                offset: Resource::MachineParameters.offset_of_instance_section(capacity),
                stride: crate::layout::MAX_MACHINE_PARAMETERS as u64 * 4,
            }),
            Resource::Visible => Sections::three(
                Section {
                    offset: crate::layout::VISIBLE_LIST_OFFSET,
                    stride: 4,
                },
                Section {
                    offset: crate::layout::VISIBLE_LIST_OFFSET + capacity as u64 * 4,
                    stride: 4,
                },
                Section {
                    offset: crate::layout::VISIBLE_LIST_OFFSET + 2 * capacity as u64 * 4,
                    stride: 4,
                },
            ),
            Resource::Frame
            | Resource::Library
            | Resource::LayerDefs
            | Resource::Heap
            | Resource::LocalPoses
            | Resource::PoseHistory
            | Resource::ModelPoses
            | Resource::Palettes
            | Resource::DualPalettes
            | Resource::MorphWeights
            | Resource::Events => Sections::NONE,
        }
    }

    /// The snapshot section of a per-joint resource whose snapshots survive a lost device
    /// ([`Survival::SnapshotsCheckpointed`]): where the snapshot of the page's joint 0 starts
    /// and the bytes per joint. [`Resource::PoseHistory`]: its first section, the poses
    /// interrupted cross-fades blend from (`LocalPose`, 48 B, from byte 0). `None` for every
    /// other resource.
    #[must_use]
    pub const fn snapshot_section(self) -> Option<Section> {
        use crate::layout::LocalPose;
        match self {
            Resource::PoseHistory => Some(Section::from_start(size_of::<LocalPose>())),
            _ => None,
        }
    }

    /// The velocity section of [`Resource::PoseHistory`] in a page of `joints` joints with
    /// [`PageOptions::inertialization`]: after the snapshots, where each joint keeps the velocity
    /// an inertialized transition starts from, then its offset's velocity (`LocalPose`, 48 B).
    /// Checkpointed with the snapshots. `None` for every other resource.
    #[must_use]
    pub const fn velocity_section(self, joints: u32) -> Option<Section> {
        use crate::layout::LocalPose;
        match self {
            Resource::PoseHistory => Some(Section {
                offset: joints as u64 * size_of::<LocalPose>() as u64,
                stride: size_of::<LocalPose>() as u64,
            }),
            _ => None,
        }
    }

    /// The snapshot section of a per-instance resource whose snapshots survive a lost device
    /// ([`Survival::SnapshotsCheckpointed`]), in a page of `capacity` instances with
    /// `morph_weights` weights each: where instance 0's snapshot starts and the bytes per
    /// instance, in its home's buffer. [`Resource::MorphWeights`]: its last third, the weights
    /// interrupted cross-fades blend from. `None` for every other resource.
    #[must_use]
    pub const fn instance_snapshot_section(self, capacity: u32, morph_weights: u32) -> Option<Section> {
        match self {
            Resource::MorphWeights => Some(Section {
                offset: Resource::MorphWeights.offset_of_instance_section(capacity)
                    + 2 * capacity as u64 * morph_weights as u64 * 4,
                stride: morph_weights as u64 * 4,
            }),
            _ => None,
        }
    }

    /// Bytes of a page's buffer for `instances` instances and `joints` joints (and what
    /// `options` add): its own data ([`Resource::data_bytes`]) then its sections
    /// ([`Resource::sections`]), each from a 256-byte boundary. `None` for a resource that is
    /// not per page or is a section of another's buffer ([`Resource::place`] says where it lies
    /// there).
    #[must_use]
    pub const fn page_bytes(self, instances: u32, joints: u32, options: PageOptions) -> Option<u64> {
        if self.is_section() {
            return None;
        }
        let Some(mut end) = self.data_bytes(instances, joints, options) else {
            return None;
        };
        let sections = self.sections();
        let mut s = 0;
        while s < sections.len() {
            let Some(bytes) = sections[s].data_bytes(instances, joints, options) else {
                return None;
            };
            end = end.next_multiple_of(crate::layout::SECTION_ALIGNMENT) + bytes;
            s += 1;
        }
        Some(end)
    }

    /// Bytes of its own data in a page of `instances` instances and `joints` joints: a section's
    /// in its home, a page buffer's before its sections. `None` for a resource that is not per
    /// page.
    ///
    /// - the instances: `Instance` (320 B) each; the visible lists: their head (64 B), then 4 B
    ///   each, 4 B each and 4 B each ([`Resource::instance_sections`]);
    /// - the character state: `Clock` (64 B) each, then from [`crate::layout::outputs_offset`]
    ///   `Output` (128 B) each; its sections: the blend lists (`BlendList`, 320 B each), then
    ///   three times [`PageOptions::morph_weights`] `f32`s each: the weights the vertex stage
    ///   reads, then from `GpuFrame::morph_api_base` the instances' own (which the CPU writes
    ///   there when the library's clips drive weights, for the sample stage to blend; else
    ///   straight into the first part), then the snapshots
    ///   ([`Resource::instance_snapshot_section`]);
    /// - per joint: a `LocalPose` (the current pose), with [`PageOptions::layers`] a second
    ///   (the mesh-space additive delta); in the pose history a `LocalPose` (the snapshot an
    ///   interrupted cross-fade starts from), with [`PageOptions::inertialization`] a second
    ///   (the velocity an inertialized transition starts with, [`Resource::velocity_section`]);
    ///   an `Affine` model matrix;
    /// - the palettes: an `Affine` palette matrix per joint; with sockets,
    ///   [`crate::layout::MAX_SOCKETS`] socket matrices per instance; with LOD interpolation two
    ///   key palettes per joint; its section, with dual quaternions, a `DualQuat` (64 B) per
    ///   joint.
    #[must_use]
    pub const fn data_bytes(self, instances: u32, joints: u32, options: PageOptions) -> Option<u64> {
        use crate::layout::{BlendList, GpuOutput, LocalPose, MAX_SOCKETS, outputs_offset};
        use crate::math::{Affine, DualQuat};
        let (i, j) = (instances as u64, joints as u64);
        Some(match self {
            Resource::Instances | Resource::Visible => self.instance_sections(instances).end(instances),
            Resource::CharacterState => outputs_offset(instances) + i * size_of::<GpuOutput>() as u64,
            Resource::BlendLists => i * size_of::<BlendList>() as u64,
            Resource::MachineStates => i * size_of::<crate::layout::GpuMachineState>() as u64,
            Resource::MachineParameters => i * crate::layout::MAX_MACHINE_PARAMETERS as u64 * 4,
            Resource::MorphWeights => 3 * i * options.morph_weights as u64 * 4,
            Resource::LocalPoses => j * (1 + options.layers as u64) * size_of::<LocalPose>() as u64,
            Resource::PoseHistory => j * (1 + options.inertialization as u64) * size_of::<LocalPose>() as u64,
            Resource::ModelPoses => j * size_of::<Affine>() as u64,
            Resource::Palettes => {
                let sockets = if options.sockets { i * MAX_SOCKETS as u64 } else { 0 };
                let keys = if options.lod_interpolation { 2 * j } else { 0 };
                (j + sockets + keys) * size_of::<Affine>() as u64
            }
            Resource::DualPalettes => {
                if options.dual_quaternion {
                    j * size_of::<DualQuat>() as u64
                } else {
                    0
                }
            }
            Resource::Frame | Resource::Library | Resource::LayerDefs | Resource::Heap | Resource::Events => {
                return None;
            }
        })
    }

    /// Buffer usages beyond `STORAGE | COPY_SRC | COPY_DST` of a per-page buffer: the palettes
    /// are also a vertex buffer (for a renderer that reads them as instance attributes).
    #[must_use]
    pub const fn extra_usage(self) -> wgpu::BufferUsages {
        self.entry().extra_usage
    }

    /// Whether the animator reads it back every frame while watched, through its ring
    /// ([`crate::gpu::Animator::watch_sockets`], `watch_outputs`, `watch_events`).
    #[must_use]
    pub const fn read_back(self) -> bool {
        self.entry().read_back
    }

    /// What of it a new device gets when the old one is lost ([`crate::gpu::Animator::rebuild`]).
    #[must_use]
    pub const fn on_device_loss(self) -> Survival {
        self.entry().survival
    }
}
