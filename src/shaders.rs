//! WGSL sources and their composition. The animation stages are modules composed with naga_oil:
//! each file names the items it imports (`#import wgpu_anim::library::{clip_info, key_time}`),
//! each stage's resources come from one declaration ([`Stage::bindings`]) as the generated
//! module `wgpu_anim::bindings`, and the fused stage imports the other stages' functions and
//! overrides their storage accessors (`virtual fn` / `override fn`) with workgroup memory.
//! Variants are shader defines ([`stage_source_with`]). `tests/shaders.rs` validates every module
//! with naga.

/// Types shared by all stages, as written by hand (`shaders/shared/types.wgsl`); the module
/// `wgpu_anim::types` is this text and the structs declared in Rust ([`types_source`]).
pub const TYPES: &str = include_str!("../shaders/shared/types.wgsl");

/// The module `wgpu_anim::types`: [`TYPES`], then the WGSL declaration of every struct declared
/// once in Rust ([`crate::layout::generated`]).
#[must_use]
pub fn types_source() -> String {
    let mut out = TYPES.to_owned();
    out.push_str("\n// Declared in Rust (layout::generated).\n");
    for s in crate::layout::generated() {
        out.push_str(&s.declaration);
    }
    out
}
/// Math shared by all stages (`shaders/shared/math.wgsl`).
pub const MATH: &str = include_str!("../shaders/shared/math.wgsl");
/// Accessors of the library heap (`shaders/shared/library.wgsl`; Rust: [`crate::gpu::LibraryHeap`]).
pub const LIBRARY: &str = include_str!("../shaders/shared/library.wgsl");
/// The ground plane of the built-in scenes (`shaders/ground.wgsl`); not an animation stage.
/// Feature `scene`.
#[cfg(feature = "scene")]
pub const GROUND: &str = include_str!("../shaders/ground.wgsl");

/// The ground renderer's shader: `relief` (a WGSL `fn ground_height(p: vec2<f32>) -> f32`, as
/// `AnimatorDesc::ground`; `None`: [`FLAT_GROUND`]) then [`GROUND`], [`with_camera`]. Feature
/// `scene`.
#[cfg(feature = "scene")]
#[must_use]
pub fn ground_source(relief: Option<&str>) -> String {
    with_camera(&format!("{}\n{GROUND}", relief.unwrap_or(FLAT_GROUND)))
}

/// A built-in renderer's shader that is not composed (the ground's, the props', the footprint
/// marks'), after the WGSL declaration of [`crate::layout::Camera`], which it binds: the
/// struct's one declaration is the Rust one.
#[must_use]
pub fn with_camera(source: &str) -> String {
    use crate::layout::WgslStruct;
    format!("{}\n{source}", crate::layout::Camera::declaration())
}
/// Skinning for a vertex shader of your own (`shaders/skinning_module.wgsl`), every name
/// prefixed `wgpu_anim_`: a naga_oil module (`#define_import_path wgpu_anim::skinning`) whose
/// group, bindings and vertex locations are shader defs; [`crate::gpu::SkinBinding`] gives the
/// defs, the plain-text form, the bind group layout and the bind groups. The built-in renderer's
/// shader imports it the same way. Its structs, bindings and functions, with their WGSL
/// signatures and the defines that select them: [`skinning_module`].
pub static SKINNING_MODULE: &str = include_str!("../shaders/skinning_module.wgsl");

#[doc = include_str!("../shaders/skinning_module.md")]
pub mod skinning_module {}

/// Blend-space weights of a blend node's children, `node_child_weights(node, params)`
/// (`shaders/shared/blend_weights.wgsl`; Rust mirror [`crate::cpu::node_child_weights`]). Needs
/// [`TYPES`] and, declared by the including module, `blend_children: array<BlendChild>` and
/// `blend_triangles: array<vec4<u32>>` storage arrays.
pub const BLEND_WEIGHTS: &str = include_str!("../shaders/shared/blend_weights.wgsl");

/// The IK solvers (`shaders/shared/ik_solve.wgsl`; Rust mirror `cpu::ik_solve`: ozz-animation's
/// two-bone and aim jobs). Needs [`TYPES`] and [`MATH`].
pub const IK_SOLVE: &str = include_str!("../shaders/shared/ik_solve.wgsl");

/// Inertialized transitions' per-joint math (`shaders/shared/inertia.wgsl`; Rust mirror
/// `cpu::inertia`: Bollo's offset decay and Holden's dead blending). Needs [`TYPES`] and [`MATH`].
pub const INERTIA: &str = include_str!("../shaders/shared/inertia.wgsl");
/// Culling: which characters a frame evaluates and where each later stage finds its instance
/// (`shaders/shared/culling.wgsl`; Rust mirror [`crate::cpu::cull`]).
pub const CULLING: &str = include_str!("../shaders/shared/culling.wgsl");

/// The ground under IK's ground goals when the animator is given none
/// (`AnimatorDesc::ground`): flat, at height 0.
pub const FLAT_GROUND: &str = "fn ground_height(p: vec2<f32>) -> f32 {\n    return 0.0;\n}\n";

/// The `wgpu_anim::ik_ground` module: `ground` (a WGSL `fn ground_height(p: vec2<f32>) -> f32`,
/// the height of the ground at world `x, z`, with any helpers it needs), or [`FLAT_GROUND`].
#[must_use]
pub fn ik_ground_module(ground: Option<&str>) -> String {
    format!(
        "#define_import_path wgpu_anim::ik_ground\n\n{}",
        ground.unwrap_or(FLAT_GROUND)
    )
}

/// The clock stage's tick arithmetic (`shaders/shared/ticks.wgsl`; Rust mirror
/// `cpu::ticks`): 64-bit integers on `vec2<u32>`, seconds to ticks ([`crate::cpu::ticks_from_f32`]),
/// [`crate::cpu::ratio_ticks`], [`crate::cpu::wrap_ticks`]. Needs [`TYPES`].
pub const TICKS: &str = include_str!("../shaders/shared/ticks.wgsl");
/// The clock stage's looping (`shaders/shared/looping.wgsl`; Rust mirror `cpu::looping`):
/// `ClipTime` and [`crate::cpu::advance_clip_time`]. Needs [`TYPES`] and [`TICKS`].
pub const LOOPING: &str = include_str!("../shaders/shared/looping.wgsl");
/// The clock stage's clip events (`shaders/shared/events.wgsl`; Rust mirror `cpu::events`):
/// [`crate::cpu::event_crossings`] and `fire_events`, which appends to the event log. Needs
/// [`TYPES`], the generated `wgpu_anim::bindings` (`event_log`, `frame`), [`LIBRARY`], [`TICKS`]
/// and [`LOOPING`].
pub const EVENTS: &str = include_str!("../shaders/shared/events.wgsl");
/// The clock stage's root motion (`shaders/shared/root_motion.wgsl`; Rust mirror
/// `cpu::root_motion`): [`crate::cpu::Rigid`], [`crate::cpu::root_displacement`], the blend of a
/// frame's displacements and `move_root`, which moves the character's world. Needs [`TYPES`],
/// [`MATH`], the generated `wgpu_anim::bindings` (`instances`) and [`LIBRARY`]. (Not the
/// `ROOT_MOTION` define: the clock stage reaches it only under that define.)
pub const ROOT_MOTION: &str = include_str!("../shaders/shared/root_motion.wgsl");
/// The clock stage's float curves (`shaders/shared/curves.wgsl`; Rust mirror `cpu::curves`):
/// [`crate::cpu::blend_curves`]. Needs [`TYPES`] and [`LIBRARY`]. (Not the `CURVES` define: the
/// clock stage reaches it only under that define.)
pub const CURVES: &str = include_str!("../shaders/shared/curves.wgsl");
/// The clock stage's state machines (`shaders/shared/machine.wgsl`; Rust mirror
/// [`crate::cpu::machine`]): the rules of one frame of a character's machine and what it plays.
/// Needs [`TYPES`], the generated `wgpu_anim::bindings`, [`LIBRARY`], [`BLEND_WEIGHTS`],
/// [`TICKS`] and [`EVENTS`].
pub const MACHINE: &str = include_str!("../shaders/shared/machine.wgsl");
/// The per-character state's sections (`shaders/shared/state.wgsl`): `load_clock`,
/// `store_clock`, `load_output`, `store_output` over the one `character_state` binding
/// ([`Resource::CharacterState`]). Needs [`TYPES`] and the generated `wgpu_anim::bindings`.
pub const STATE: &str = include_str!("../shaders/shared/state.wgsl");

mod entry;
mod resources;

pub use entry::{Entry, PageOptions, Scope, Section, Sections, Survival};
pub use resources::{MAX_SECTIONS, Resource};

/// How a stage accesses a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A uniform buffer.
    Uniform,
    /// A read-only storage buffer.
    Read,
    /// A read-write storage buffer.
    ReadWrite,
}

/// A pipeline stage, named as its shader file and its CPU mirror.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// `shaders/clock.wgsl`, [`crate::cpu::clock`].
    Clock,
    /// `shaders/cull.wgsl`, [`crate::cpu::cull`]: with culling, after the clock (or the fused
    /// pass), one workgroup per page lists the characters the clock marked for evaluation and
    /// sizes the later stages' indirect dispatches ([`Stage::staged`]).
    Cull,
    /// `shaders/sample.wgsl`, [`crate::cpu::sample`].
    Sample,
    /// `shaders/local_to_model.wgsl`, [`crate::cpu::local_to_model`].
    LocalToModel,
    /// `shaders/ik.wgsl`, [`crate::cpu::ik`]: run between `LocalToModel` and `Palette` when the
    /// library has IK chains ([`Stage::staged`]).
    Ik,
    /// `shaders/palette.wgsl`, [`crate::cpu::palette`].
    Palette,
    /// `shaders/skin.wgsl`, [`crate::cpu::skin`].
    Skin,
    /// `shaders/fused.wgsl`: sample, local_to_model (a level of the hierarchy at a time), ik and
    /// palette in one dispatch, a workgroup per character, after the clock pass,
    /// [`crate::cpu::fused`].
    Fused,
}

impl Stage {
    /// The animation compute stages, in frame order.
    pub const COMPUTE: [Stage; 4] = [Stage::Clock, Stage::Sample, Stage::LocalToModel, Stage::Palette];
    /// Every stage.
    pub const ALL: [Stage; 8] = [
        Stage::Clock,
        Stage::Cull,
        Stage::Sample,
        Stage::LocalToModel,
        Stage::Ik,
        Stage::Palette,
        Stage::Skin,
        Stage::Fused,
    ];

    /// The staged path's passes, in frame order: [`Stage::COMPUTE`], with [`Stage::Ik`] after
    /// `LocalToModel` when `ik` (the library has IK chains) and [`Stage::Cull`] after `Clock`
    /// when `cull` (the animator culls).
    #[must_use]
    pub fn staged(ik: bool, cull: bool) -> Vec<Stage> {
        let mut stages = Stage::COMPUTE.to_vec();
        if ik {
            stages.insert(3, Stage::Ik);
        }
        if cull {
            stages.insert(1, Stage::Cull);
        }
        stages
    }

    /// The stage's name: its WGSL file stem, entry point and CPU mirror function.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Clock => "clock",
            Stage::Cull => "cull",
            Stage::Sample => "sample",
            Stage::LocalToModel => "local_to_model",
            Stage::Ik => "ik",
            Stage::Palette => "palette",
            Stage::Skin => "skin",
            Stage::Fused => "fused",
        }
    }

    /// The stage's own WGSL file.
    #[must_use]
    pub const fn file(self) -> &'static str {
        match self {
            Stage::Clock => include_str!("../shaders/clock.wgsl"),
            Stage::Cull => include_str!("../shaders/cull.wgsl"),
            Stage::Sample => include_str!("../shaders/sample.wgsl"),
            Stage::LocalToModel => include_str!("../shaders/local_to_model.wgsl"),
            Stage::Ik => include_str!("../shaders/ik.wgsl"),
            Stage::Palette => include_str!("../shaders/palette.wgsl"),
            Stage::Skin => include_str!("../shaders/skin.wgsl"),
            Stage::Fused => include_str!("../shaders/fused.wgsl"),
        }
    }

    /// The resources an animation stage binds and how, in binding order: what the resources'
    /// entries say of the stage ([`Entry::stages`], [`Resource::entry`]), from which both its
    /// WGSL variables ([`bindings_wgsl`]) and its bind group layout (in the animator) are made.
    /// Read-only wherever the stage only reads; `tests/shaders.rs` checks this against what each
    /// entry point uses. Every stage fits WebGPU's default limits ([`STORAGE_SLOTS_SPARE`] say
    /// how many slots stay free). `Skin` binds its own resources (`SkinnedRenderer`): empty here.
    #[must_use]
    pub const fn bindings(self) -> &'static [(Resource, Access)] {
        const CLOCK: [(Resource, Access); binding_count(Stage::Clock)] = bindings_of(Stage::Clock);
        const CULL: [(Resource, Access); binding_count(Stage::Cull)] = bindings_of(Stage::Cull);
        const SAMPLE: [(Resource, Access); binding_count(Stage::Sample)] = bindings_of(Stage::Sample);
        const LOCAL_TO_MODEL: [(Resource, Access); binding_count(Stage::LocalToModel)] =
            bindings_of(Stage::LocalToModel);
        const IK: [(Resource, Access); binding_count(Stage::Ik)] = bindings_of(Stage::Ik);
        const PALETTE: [(Resource, Access); binding_count(Stage::Palette)] = bindings_of(Stage::Palette);
        const FUSED: [(Resource, Access); binding_count(Stage::Fused)] = bindings_of(Stage::Fused);
        match self {
            Stage::Clock => &CLOCK,
            Stage::Cull => &CULL,
            Stage::Sample => &SAMPLE,
            Stage::LocalToModel => &LOCAL_TO_MODEL,
            Stage::Ik => &IK,
            Stage::Palette => &PALETTE,
            Stage::Fused => &FUSED,
            Stage::Skin => &[],
        }
    }

    /// The bind group layout entries of [`Stage::bindings`], visible to compute: for a pass of your
    /// own running a stage's shader (a variant, say) against the animator's buffers. The animator
    /// makes its own layouts from what its variants use ([`layout_entries_of`] of
    /// [`StageVariant::bindings`]).
    #[must_use]
    pub fn layout_entries(self) -> Vec<wgpu::BindGroupLayoutEntry> {
        layout_entries_of(self.bindings())
    }

    /// Storage buffers the stage binds.
    #[must_use]
    pub fn storage_buffers(self) -> u32 {
        self.bindings().iter().filter(|(_, a)| *a != Access::Uniform).count() as u32
    }
}

/// The bind group layout entries, visible to compute, of `bindings` (a stage's
/// [`Stage::bindings`], or those a variant uses: [`StageVariant::bindings`]).
#[must_use]
pub fn layout_entries_of(bindings: &[(Resource, Access)]) -> Vec<wgpu::BindGroupLayoutEntry> {
    bindings
        .iter()
        .map(|&(resource, access)| {
            let ty = match access {
                Access::Uniform => wgpu::BufferBindingType::Uniform,
                Access::Read => wgpu::BufferBindingType::Storage { read_only: true },
                Access::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
            };
            let min_size = resource.min_binding_size();
            crate::gpu::wgpu_util::buffer_entry(resource.binding(), wgpu::ShaderStages::COMPUTE, ty, min_size)
        })
        .collect()
}

/// The resources `stage` binds and how, in binding order (the entries that name it,
/// [`Entry::stages`]), at the start of an array as long as the table, and how many.
const fn stage_bindings(stage: Stage) -> ([(Resource, Access); Resource::ALL.len()], usize) {
    let mut out = [(Resource::Frame, Access::Uniform); Resource::ALL.len()];
    let mut n = 0;
    let mut k = 0;
    while k < Resource::ALL.len() {
        let stages = Resource::ALL[k].entry().stages;
        let mut s = 0;
        while s < stages.len() {
            if stages[s].0 as u8 == stage as u8 {
                out[n] = (Resource::ALL[k], stages[s].1);
                n += 1;
            }
            s += 1;
        }
        k += 1;
    }
    (out, n)
}

/// How many resources `stage` binds.
const fn binding_count(stage: Stage) -> usize {
    stage_bindings(stage).1
}

/// The `N` resources `stage` binds and how, in binding order ([`Stage::bindings`]).
const fn bindings_of<const N: usize>(stage: Stage) -> [(Resource, Access); N] {
    let all = stage_bindings(stage).0;
    let mut out = [(Resource::Frame, Access::Uniform); N];
    let mut k = 0;
    while k < N {
        out[k] = all[k];
        k += 1;
    }
    out
}

/// Storage-buffer slots every animation stage leaves free under WebGPU's default limit of 8 per
/// shader stage, in every variant: room for the next per-character data. The library is one
/// read-only heap of sections (compressed keys, sockets and events included); what a page keeps
/// per character is one buffer of sections (clocks, outputs, blend lists, morph weights), and
/// its palettes one buffer with the dual quaternions after them ([`Resource::home`]). The
/// fullest stages (`sample`, `palette`, and the fused stage with a thread per character) bind
/// six.
pub const STORAGE_SLOTS_SPARE: u32 = 2;

/// The WGSL declarations of every resource, made from [`Stage::bindings`]: those the stage binds
/// with its access, the others read-write. Shared modules (the library accessors, the other
/// stages' functions a fused stage calls) name resources the stage itself may not use; only
/// what its entry point uses enters its pipeline, and `tests/shaders.rs` checks that this is
/// exactly what the stage binds.
#[must_use]
pub fn bindings_wgsl(stage: Stage) -> String {
    let mut out = format!(
        "// Resources of the {} stage (made from shaders::Stage::bindings).\n",
        stage.name()
    );
    for resource in Resource::ALL.into_iter().filter(|r| !r.is_section()) {
        let access = stage.bindings().iter().find(|(r, _)| *r == resource).map_or(
            if resource.is_uniform() {
                Access::Uniform
            } else {
                Access::ReadWrite
            },
            |(_, a)| *a,
        );
        let space = match access {
            Access::Uniform => "uniform",
            Access::Read => "storage, read",
            Access::ReadWrite => "storage, read_write",
        };
        out.push_str(&format!(
            "@group(0) @binding({}) var<{space}> {}: {};\n",
            resource.binding(),
            resource.name(),
            resource.wgsl_type()
        ));
    }
    // Each section's base, from the frame (`Resource::section_bases`).
    for resource in Resource::ALL {
        if let Some(slot) = resource.section_slot() {
            out.push_str(&format!(
                "// Where the {name} start in the {home} buffer, in 16-byte units.\n\
                 fn {name}_base() -> u32 {{ return frame.sections[{}u][{}u]; }}\n",
                slot / 4,
                slot % 4,
                name = resource.name(),
                home = resource.home().name(),
            ));
        }
    }
    out
}

/// The generated module `wgpu_anim::bindings` of a stage (see [`bindings_wgsl`]).
fn bindings_module(stage: Stage) -> String {
    // The hand-written types the bindings name, then every struct declared in Rust.
    let mut types = vec!["EventLog", "MAX_LAYER_DEFS", "Visible"];
    types.extend(crate::layout::generated().iter().map(|g| g.name));
    format!(
        "#define_import_path wgpu_anim::bindings\n#import wgpu_anim::types::{{{}}}\n\n{}",
        types.join(", "),
        bindings_wgsl(stage)
    )
}

/// The modules a stage may import, in import order: `(import path, source)`.
fn modules(stage: Stage, ground: Option<&str>) -> Vec<(&'static str, std::borrow::Cow<'static, str>)> {
    let plain = |s: &'static str| std::borrow::Cow::Borrowed(s);
    if stage == Stage::Skin {
        return vec![
            ("wgpu_anim::types", std::borrow::Cow::Owned(types_source())),
            ("wgpu_anim::skinning", plain(SKINNING_MODULE)),
        ];
    }
    vec![
        ("wgpu_anim::types", std::borrow::Cow::Owned(types_source())),
        ("wgpu_anim::math", plain(MATH)),
        ("wgpu_anim::bindings", std::borrow::Cow::Owned(bindings_module(stage))),
        ("wgpu_anim::state", plain(STATE)),
        ("wgpu_anim::library", plain(LIBRARY)),
        ("wgpu_anim::blend_weights", plain(BLEND_WEIGHTS)),
        ("wgpu_anim::ticks", plain(TICKS)),
        ("wgpu_anim::looping", plain(LOOPING)),
        ("wgpu_anim::events", plain(EVENTS)),
        ("wgpu_anim::root_motion", plain(ROOT_MOTION)),
        ("wgpu_anim::curves", plain(CURVES)),
        ("wgpu_anim::machine", plain(MACHINE)),
        ("wgpu_anim::inertia", plain(INERTIA)),
        ("wgpu_anim::culling", plain(CULLING)),
        ("wgpu_anim::clock", plain(Stage::Clock.file())),
        ("wgpu_anim::sample", plain(Stage::Sample.file())),
        ("wgpu_anim::local_to_model", plain(Stage::LocalToModel.file())),
        ("wgpu_anim::ik_solve", plain(IK_SOLVE)),
        (
            "wgpu_anim::ik_ground",
            std::borrow::Cow::Owned(ik_ground_module(ground)),
        ),
        ("wgpu_anim::ik", plain(Stage::Ik.file())),
        ("wgpu_anim::palette", plain(Stage::Palette.file())),
    ]
}

/// A shader define of a stage variant: its name and value (`#ifdef NAME`, `#if NAME == 2`).
pub type ShaderDef = (&'static str, naga_oil::compose::ShaderDefValue);

/// The skinning module's defines that place its bindings and vertex inputs: `Stage::Skin` needs
/// all of them in its defines (the built-in renderer passes those of `gpu::SkinBinding::BUILT_IN`,
/// `SkinBinding::stage_defs`).
pub const SKIN_PLACEMENT_DEFS: [&str; 11] = [
    "WGPU_ANIM_VERTEX_LOCATION",
    "WGPU_ANIM_SKIN_GROUP",
    "WGPU_ANIM_PALETTE_BINDING",
    "WGPU_ANIM_INSTANCE_BINDING",
    "WGPU_ANIM_PREVIOUS_BINDING",
    "WGPU_ANIM_DUAL_BINDING",
    "WGPU_ANIM_PREVIOUS_DUAL_BINDING",
    "WGPU_ANIM_MORPH_WEIGHTS_BINDING",
    "WGPU_ANIM_MORPH_TARGETS_BINDING",
    "WGPU_ANIM_VISIBLE_BINDING",
    "WGPU_ANIM_VAT_BINDING",
];

/// The composed naga module of a stage with the given defines. `Skin`, the built-in renderer's
/// shader, imports the skinning module as a user's own shader would: `defs` must place it (every
/// one of [`SKIN_PLACEMENT_DEFS`]; the renderer passes `gpu::SkinBinding::BUILT_IN.stage_defs()`).
///
/// Errors: a module that does not compose (the message says where), or `Skin` without its
/// placement defines (the message names the first one missing).
pub fn stage_module_with(stage: Stage, defs: &[ShaderDef]) -> Result<naga::Module, String> {
    stage_module_on_ground(stage, defs, None)
}

/// [`stage_module_with`], with `ground` as the IK stage's ground function ([`ik_ground_module`];
/// `None`: [`FLAT_GROUND`]).
///
/// Errors: as [`stage_module_with`]; a ground that does not compose (the message says where).
pub fn stage_module_on_ground(stage: Stage, defs: &[ShaderDef], ground: Option<&str>) -> Result<naga::Module, String> {
    use naga_oil::compose::{ComposableModuleDescriptor, Composer, NagaModuleDescriptor, ShaderLanguage, ShaderType};
    if stage == Stage::Skin {
        if let Some(missing) = SKIN_PLACEMENT_DEFS.iter().find(|d| !defs.iter().any(|(k, _)| k == *d)) {
            return Err(format!(
                "skin: the define {missing} is missing (the skinning module's placement, SkinBinding::stage_defs)"
            ));
        }
    }
    let shader_defs: std::collections::HashMap<String, naga_oil::compose::ShaderDefValue> =
        defs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect();
    let mut composer = Composer::default();
    let top = format!("wgpu_anim::{}", stage.name());
    for (name, source) in modules(stage, ground) {
        // A staged stage is the top-level shader itself; the fused one imports all four.
        if name == top {
            break;
        }
        let added = composer.add_composable_module(ComposableModuleDescriptor {
            source: &source,
            file_path: name,
            language: ShaderLanguage::Wgsl,
            as_name: Some(name.to_owned()),
            additional_imports: &[],
            shader_defs: shader_defs.clone(),
        });
        if let Err(e) = added {
            return Err(format!("{name}: {}", e.emit_to_string(&composer)));
        }
    }
    let module = composer.make_naga_module(NagaModuleDescriptor {
        source: stage.file(),
        file_path: stage.name(),
        shader_type: ShaderType::Wgsl,
        shader_defs,
        additional_imports: &[],
    });
    module.map_err(|e| format!("{}: {}", stage.name(), e.emit_to_string(&composer)))
}

/// The complete WGSL of a stage with the given defines: the composed module written back as
/// WGSL, with naga_oil's module decorations taken off the names (every name is unique across
/// the modules).
pub fn stage_source_with(stage: Stage, defs: &[ShaderDef]) -> Result<String, String> {
    stage_source_on_ground(stage, defs, None)
}

/// [`stage_source_with`], with `ground` as the IK stage's ground function
/// ([`stage_module_on_ground`]).
///
/// Errors: as [`stage_module_on_ground`].
pub fn stage_source_on_ground(stage: Stage, defs: &[ShaderDef], ground: Option<&str>) -> Result<String, String> {
    stage_variant(stage, defs, ground).map(|v| v.source)
}

/// A stage composed with its defines: its WGSL and the resources its entry point uses.
#[derive(Clone, Debug)]
pub struct StageVariant {
    /// The complete WGSL ([`stage_source_on_ground`]).
    pub source: String,
    /// The entries of [`Stage::bindings`] the entry point reads or writes, in their order: what
    /// the variant's pipeline binds. A variant compiled without a feature leaves out the buffer
    /// only that feature uses (the dual quaternions without them, the morph weights of a library
    /// without morph targets), and with it the barrier and the bookkeeping a read-write binding
    /// costs every dispatch of every page.
    pub bindings: Vec<(Resource, Access)>,
}

/// [`stage_source_on_ground`] and the resources the variant's entry point uses.
///
/// Errors: as [`stage_module_on_ground`], or a module naga refuses.
pub fn stage_variant(stage: Stage, defs: &[ShaderDef], ground: Option<&str>) -> Result<StageVariant, String> {
    let module = stage_module_on_ground(stage, defs, ground)?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .map_err(|e| format!("{}: {e:?}", stage.name()))?;
    let wgsl = naga::back::wgsl::write_string(&module, &info, naga::back::wgsl::WriterFlags::empty())
        .map_err(|e| format!("{}: {e}", stage.name()))?;
    let source = undecorate(&wgsl);
    // The globals the entry point uses, by their undecorated names.
    let entry = module.entry_points.iter().position(|e| e.name == stage.name());
    let used: Vec<String> = match entry {
        Some(index) => {
            let uses = info.get_entry_point(index);
            module
                .global_variables
                .iter()
                .filter(|(h, _)| !uses[*h].is_empty())
                .filter_map(|(_, g)| g.name.as_deref().map(undecorate))
                .collect()
        }
        None => return Err(format!("{}: no entry point of that name", stage.name())),
    };
    let bindings = stage
        .bindings()
        .iter()
        .copied()
        .filter(|(r, _)| used.iter().any(|n| n == r.name()))
        .collect();
    Ok(StageVariant { source, bindings })
}

/// The defines of the stage variants a library needs: `ROOT_MOTION` when a clip has root motion,
/// `CURVES` when a clip has float curves, `MORPH` when a clip drives morph-target weights (the
/// sample stage blends them), `IK` when a skeleton has IK chains (the fused stage runs the IK
/// stage's function, which writes each character's `ik_reached` output word whatever the
/// defines), `OUTPUTS` when either of the first two (the clock and fused stages write the rest of
/// the characters' outputs), `COMPRESSED` when a clip is compressed, `PACKED_ONLY` when, beside
/// single keys, the clips' joint tracks are all packed, `CUBIC_KEYS` when a track (joint, root
/// motion or curve) has cubic-spline keys, `CLIP_TIMES` when each clip keys its raw joint tracks
/// at one set of times (the sample stage searches them once per character and sample,
/// `AnimationLibrary::clips_share_key_times`), `MACHINES` when it has state machines (the clock
/// runs them), `MACHINE_TREES` when a machine's state plays a blend tree (for its length),
/// `RETARGET` when a skeleton plays another's clips (the sample stage retargets them, the clock
/// scales their root motion). Without them the stages carry no code the library cannot use: on
/// lavapipe, which runs both sides of every branch, that code, never run, made the clock 50 % slower.
#[must_use]
pub fn library_defs(library: &crate::AnimationLibrary) -> Vec<ShaderDef> {
    use naga_oil::compose::ShaderDefValue::Bool;
    let root_motion = library.has_root_motion_clips();
    let curves = !library.curve_names().is_empty();
    let mut defs = Vec::new();
    if root_motion {
        defs.push(("ROOT_MOTION", Bool(true)));
    }
    if curves {
        defs.push(("CURVES", Bool(true)));
    }
    if root_motion || curves {
        defs.push(("OUTPUTS", Bool(true)));
    }
    if library.has_compressed_clips() {
        defs.push(("COMPRESSED", Bool(true)));
    }
    if library.has_morph_weights() {
        defs.push(("MORPH", Bool(true)));
    }
    if library.has_ik() {
        defs.push(("IK", Bool(true)));
    }
    // Morph-weight tracks are raw keys: the sampler of raw keys stays.
    if library.gpu_samples_packed_only() {
        defs.push(("PACKED_ONLY", Bool(true)));
    }
    let cubic = crate::clip::Interpolation::CubicSpline.gpu_code();
    if library.tracks().iter().any(|t| t.interpolation == cubic) {
        defs.push(("CUBIC_KEYS", Bool(true)));
    }
    if library.clips_share_key_times() {
        defs.push(("CLIP_TIMES", Bool(true)));
    }
    if !library.machines().machines.is_empty() {
        defs.push(("MACHINES", Bool(true)));
    }
    if library.machines().states.iter().any(|s| s.tree_nodes != 0) {
        defs.push(("MACHINE_TREES", Bool(true)));
    }
    if library.has_retargets() {
        defs.push(("RETARGET", Bool(true)));
    }
    defs
}

/// Every feature's define: the variant that uses every binding of [`Stage::bindings`].
pub const ALL_FEATURES: &[ShaderDef] = &[
    ("ROOT_MOTION", naga_oil::compose::ShaderDefValue::Bool(true)),
    ("CURVES", naga_oil::compose::ShaderDefValue::Bool(true)),
    ("OUTPUTS", naga_oil::compose::ShaderDefValue::Bool(true)),
    ("COMPRESSED", naga_oil::compose::ShaderDefValue::Bool(true)),
    ("CUBIC_KEYS", naga_oil::compose::ShaderDefValue::Bool(true)),
    ("MORPH", naga_oil::compose::ShaderDefValue::Bool(true)),
    ("IK", naga_oil::compose::ShaderDefValue::Bool(true)),
    ("MACHINES", naga_oil::compose::ShaderDefValue::Bool(true)),
    ("MACHINE_TREES", naga_oil::compose::ShaderDefValue::Bool(true)),
    ("RETARGET", naga_oil::compose::ShaderDefValue::Bool(true)),
];

/// The complete WGSL of an animation compute stage (no defines): [`stage_source_with`] with
/// none. `Stage::Skin` needs its placement defines, so it is an error here; use
/// [`stage_source_with`] with `gpu::SkinBinding::BUILT_IN.stage_defs()`.
///
/// Errors: `Stage::Skin`; a shader of the crate's own that does not compose (`tests/shaders.rs`
/// guards this).
pub fn stage_source(stage: Stage) -> Result<String, String> {
    stage_source_with(stage, &[])
}

/// A shader of your own (a pass beside the animator's, as the scene's `gpu::Footprints`) that imports the
/// crate's shared types, math and clock tick arithmetic (`#import wgpu_anim::types::{EventRecord,
/// MAX_SOCKETS}`, `#import wgpu_anim::ticks::ratio_ticks`), composed and written back as plain
/// WGSL, so that its structs are the stages' own.
///
/// Errors: a source that does not compose or validate (the message says where).
pub fn compose_with_shared(source: &str, file: &str) -> Result<String, String> {
    use naga_oil::compose::{ComposableModuleDescriptor, Composer, NagaModuleDescriptor, ShaderLanguage, ShaderType};
    let mut composer = Composer::default();
    for (name, module) in [
        ("wgpu_anim::types", types_source()),
        ("wgpu_anim::math", MATH.to_owned()),
        ("wgpu_anim::ticks", TICKS.to_owned()),
    ] {
        let added = composer.add_composable_module(ComposableModuleDescriptor {
            source: &module,
            file_path: name,
            language: ShaderLanguage::Wgsl,
            as_name: Some(name.to_owned()),
            ..Default::default()
        });
        if let Err(e) = added {
            return Err(format!("{name}: {}", e.emit_to_string(&composer)));
        }
    }
    let module = composer
        .make_naga_module(NagaModuleDescriptor {
            source,
            file_path: file,
            shader_type: ShaderType::Wgsl,
            ..Default::default()
        })
        .map_err(|e| format!("{file}: {}", e.emit_to_string(&composer)))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .map_err(|e| format!("{file}: {e:?}"))?;
    let wgsl = naga::back::wgsl::write_string(&module, &info, naga::back::wgsl::WriterFlags::empty())
        .map_err(|e| format!("{file}: {e}"))?;
    Ok(undecorate(&wgsl))
}

/// `text` without naga_oil's module decorations (`nameX_naga_oil_mod_X<base32>X` → `name`).
fn undecorate(text: &str) -> String {
    const PRE: &str = "X_naga_oil_mod_X";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(k) = rest.find(PRE) {
        out.push_str(&rest[..k]);
        let after = &rest[k + PRE.len()..];
        // The module's name in base32, then the closing `X`.
        let code = after
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit()))
            .unwrap_or(after.len());
        rest = &after[code..];
    }
    out.push_str(rest);
    out
}

/// Parses and validates a WGSL module with naga, returning the module and its info.
pub fn validate(source: &str) -> Result<(naga::Module, naga::valid::ModuleInfo), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string(source))?;
    Ok((module, info))
}

#[cfg(test)]
mod tests {
    use super::{PageOptions, Resource, Scope, Survival};

    /// Every per-instance resource's sections lie in its home's page buffer in order without
    /// overlap; a section of another resource's buffer has no buffer of its own and lies after
    /// the home's own sections, from a 256-byte boundary; a resource with no section has no
    /// per-instance bytes.
    #[test]
    fn page_bytes_agree_with_the_instance_sections() {
        for resource in Resource::ALL {
            for capacity in [0, 1, 3, 64, 1000] {
                let options = PageOptions {
                    morph_weights: 5,
                    dual_quaternion: true,
                    sockets: true,
                    lod_interpolation: true,
                    ..PageOptions::default()
                };
                let sections = resource.instance_sections(capacity);
                let bytes = resource.page_bytes(capacity, 7, options);
                if resource.scope() != Scope::Page {
                    assert!(sections.is_empty(), "{resource:?} is not per page");
                    assert_eq!(bytes, None, "{resource:?}");
                    continue;
                }
                let home = resource.home();
                let home_bytes = home.page_bytes(capacity, 7, options).unwrap();
                let (offset, size) = resource.place(capacity, 7, options).unwrap();
                assert!(offset + size <= home_bytes, "{resource:?}");
                if resource.is_section() {
                    assert_eq!(bytes, None, "{resource:?} has no buffer of its own");
                    assert_eq!(offset % 256, 0, "{resource:?}");
                    assert!(offset >= home.instance_sections(capacity).end(capacity), "{resource:?}");
                } else {
                    assert_eq!((offset, size), (0, home_bytes), "{resource:?}");
                }
                let mut end = 0;
                for section in sections {
                    assert!(section.stride > 0, "{resource:?}");
                    assert!(section.offset >= end, "{resource:?}: sections overlap");
                    assert!(
                        section.offset.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT),
                        "{resource:?}"
                    );
                    assert!(
                        section.stride.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT),
                        "{resource:?}"
                    );
                    end = section.at(u64::from(capacity));
                }
                assert!(end <= home_bytes, "{resource:?}");
            }
        }
        let state = Resource::CharacterState.instance_sections(10);
        assert_eq!(state.as_slice()[1].offset, crate::layout::outputs_offset(10));
        // The sections of the character state follow each other: clocks, outputs, blend lists,
        // morph weights.
        let options = PageOptions {
            morph_weights: 3,
            ..PageOptions::default()
        };
        let blend = Resource::BlendLists.place(10, 0, options).unwrap();
        let morph = Resource::MorphWeights.place(10, 0, options).unwrap();
        assert!(state.end(10) <= blend.0 && blend.0 + blend.1 <= morph.0);
        assert_eq!(
            Resource::CharacterState.page_bytes(10, 0, options),
            Some(morph.0 + morph.1)
        );
    }

    /// A section's place follows from the table: each from a 256-byte boundary after its home's
    /// own data and the sections before it, its base in the frame at its slot; a section that
    /// holds a value per instance lies where the capacity alone says, whatever the options.
    #[test]
    fn sections_are_placed_by_the_table_and_carried_by_the_frame() {
        let all = PageOptions {
            sockets: true,
            dual_quaternion: true,
            morph_weights: 5,
            inertialization: true,
            layers: true,
            culling: true,
            lod_interpolation: true,
        };
        let mut slots = Vec::new();
        for options in [PageOptions::NONE, all] {
            for (instances, joints) in [(1, 1), (10, 530), (1000, 53_000)] {
                let bases = Resource::section_bases(instances, joints, options);
                for home in Resource::ALL.into_iter().filter(|r| !r.is_section()) {
                    let Some(mut end) = home.data_bytes(instances, joints, options) else {
                        continue;
                    };
                    for &section in home.sections() {
                        assert_eq!(section.home(), home);
                        let (offset, bytes) = section.place(instances, joints, options).unwrap();
                        assert_eq!(offset, end.next_multiple_of(256), "{section:?}");
                        end = offset + bytes;
                        let slot = section.section_slot().unwrap();
                        slots.push(slot);
                        assert_eq!(u64::from(bases[slot / 4][slot % 4]) * 16, offset, "{section:?}");
                        if !section.instance_sections(instances).is_empty() {
                            let none = section.place(instances, joints, PageOptions::NONE).unwrap();
                            assert_eq!(none.0, offset, "{section:?} moves with the options");
                        }
                    }
                    assert_eq!(home.page_bytes(instances, joints, options), Some(end), "{home:?}");
                }
            }
        }
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots, (0..slots.len()).collect::<Vec<_>>(), "one slot per section");
        assert!(slots.len() <= super::MAX_SECTIONS);
        // Every stage's WGSL names each section's base.
        let wgsl = super::bindings_wgsl(super::Stage::Clock);
        for r in Resource::ALL.into_iter().filter(|r| r.is_section()) {
            assert!(wgsl.contains(&format!("fn {}_base() -> u32", r.name())), "{r:?}");
        }
    }

    /// What a checkpoint needs of a resource is in the table: the sections of every checkpointed
    /// resource, the snapshot section of every resource whose snapshots are.
    #[test]
    fn every_checkpointed_resource_has_sections_to_copy() {
        for resource in Resource::ALL {
            let survival = resource.on_device_loss();
            if survival == Survival::Checkpointed {
                assert_eq!(resource.scope(), Scope::Page, "{resource:?}");
                assert!(!resource.instance_sections(1).is_empty(), "{resource:?}");
            }
            let snapshots = resource.snapshot_section();
            let instance_snapshots = resource.instance_snapshot_section(8, 3);
            assert_eq!(
                snapshots.is_some() || instance_snapshots.is_some(),
                survival == Survival::SnapshotsCheckpointed,
                "{resource:?}"
            );
            if let Some(s) = snapshots {
                let end = s.at(8);
                assert!(
                    end <= resource.page_bytes(0, 8, PageOptions::default()).unwrap_or(0),
                    "{resource:?}"
                );
            }
            if let Some(s) = instance_snapshots {
                let options = PageOptions {
                    morph_weights: 3,
                    ..PageOptions::default()
                };
                let (offset, bytes) = resource.place(8, 0, options).unwrap();
                assert_eq!(s.at(8), offset + bytes, "{resource:?}");
            }
            // The velocities follow the snapshots and end the buffer, whether or not layers keep
            // mesh-space deltas (in the local poses).
            for layers in [false, true] {
                let options = PageOptions {
                    inertialization: true,
                    layers,
                    ..PageOptions::default()
                };
                if let Some(v) = resource.velocity_section(8) {
                    let snapshots = snapshots.expect("velocities beside snapshots");
                    assert_eq!(v.offset, snapshots.at(8), "{resource:?}");
                    assert_eq!(v.at(8), resource.page_bytes(0, 8, options).unwrap_or(0), "{resource:?}");
                }
            }
        }
    }
}
