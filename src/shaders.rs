//! WGSL sources. WGSL has no `#include`, so each compute stage's module is the shared files
//! followed by the stage file; [`stage_source`] builds it, and `tests/shaders.rs` validates every
//! module with naga.

/// Types shared by all stages (`shaders/shared/types.wgsl`).
pub const TYPES: &str = include_str!("../shaders/shared/types.wgsl");
/// Math shared by all stages (`shaders/shared/math.wgsl`).
pub const MATH: &str = include_str!("../shaders/shared/math.wgsl");
/// The animation passes' resource bindings (`shaders/shared/bindings.wgsl`).
pub const BINDINGS: &str = include_str!("../shaders/shared/bindings.wgsl");
/// The ground plane of the built-in scenes (`shaders/ground.wgsl`); not an animation stage.
pub const GROUND: &str = include_str!("../shaders/ground.wgsl");
/// Skinning functions (`shaders/shared/skinning.wgsl`).
pub const SKINNING: &str = include_str!("../shaders/shared/skinning.wgsl");

/// Blend-space weights of a blend node's children, `node_child_weights(node, params)`
/// (`shaders/shared/blend_weights.wgsl`; Rust mirror [`crate::blend::node_child_weights`]). Needs
/// [`TYPES`] and, declared by the including module, `blend_children: array<BlendChild>` and
/// `blend_triangles: array<vec4<u32>>` storage arrays.
pub const BLEND_WEIGHTS: &str = include_str!("../shaders/shared/blend_weights.wgsl");

/// Everything a user's own vertex shader needs to skin with the palette buffer: the `Affine` and
/// `Instance` structs, `skin_vertex(offset, joints, weights, position, normal)`,
/// `affine_transform_point` and `affine_transform_normal`. Append it to your WGSL after declaring
/// `@group(G) @binding(B) var<storage, read> palettes: array<Affine>;` (the declaration may come
/// later in the module too; WGSL declarations are order-independent). The offset of instance `i`
/// is `Animator::joint_offset(i)` (also `Instance::joint_offset` in the instance buffer).
pub const SKIN_FUNCTIONS: &str = concat!(
    include_str!("../shaders/shared/types.wgsl"),
    include_str!("../shaders/shared/math.wgsl"),
    include_str!("../shaders/shared/skinning.wgsl"),
);

/// A pipeline stage, named as its shader file and its CPU mirror.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// `shaders/clock.wgsl`, [`crate::cpu::clock`].
    Clock,
    /// `shaders/sample.wgsl`, [`crate::cpu::sample`].
    Sample,
    /// `shaders/local_to_model.wgsl`, [`crate::cpu::local_to_model`].
    LocalToModel,
    /// `shaders/palette.wgsl`, [`crate::cpu::palette`].
    Palette,
    /// `shaders/skin.wgsl`, [`crate::cpu::skin`].
    Skin,
    /// `shaders/fused.wgsl`: clock, sample, local_to_model and palette in one dispatch,
    /// [`crate::cpu::fused`].
    Fused,
}

impl Stage {
    /// The animation compute stages, in frame order.
    pub const COMPUTE: [Stage; 4] = [Stage::Clock, Stage::Sample, Stage::LocalToModel, Stage::Palette];
    /// Every stage.
    pub const ALL: [Stage; 6] = [
        Stage::Clock,
        Stage::Sample,
        Stage::LocalToModel,
        Stage::Palette,
        Stage::Skin,
        Stage::Fused,
    ];

    /// The stage's name: its WGSL file stem, entry point and CPU mirror function.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Clock => "clock",
            Stage::Sample => "sample",
            Stage::LocalToModel => "local_to_model",
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
            Stage::Sample => include_str!("../shaders/sample.wgsl"),
            Stage::LocalToModel => include_str!("../shaders/local_to_model.wgsl"),
            Stage::Palette => include_str!("../shaders/palette.wgsl"),
            Stage::Skin => include_str!("../shaders/skin.wgsl"),
            Stage::Fused => include_str!("../shaders/fused.wgsl"),
        }
    }
}

/// The complete WGSL module of a stage.
#[must_use]
pub fn stage_source(stage: Stage) -> String {
    match stage {
        Stage::Skin => [TYPES, MATH, SKINNING, stage.file()].join("\n"),
        Stage::Clock => [TYPES, MATH, BINDINGS, BLEND_WEIGHTS, stage.file()].join("\n"),
        // The fused stage calls every animation stage's functions (their entry points come
        // along, unused), with its own blend list accessors in place of the sample stage's.
        Stage::Fused => [
            TYPES,
            MATH,
            BINDINGS,
            BLEND_WEIGHTS,
            Stage::Clock.file(),
            &without_block(Stage::Sample.file(), "storage blend list"),
            Stage::LocalToModel.file(),
            Stage::Palette.file(),
            stage.file(),
        ]
        .join("\n"),
        _ => [TYPES, MATH, BINDINGS, stage.file()].join("\n"),
    }
}

/// `source` without the lines from `// BEGIN name` to `// END name`.
fn without_block(source: &str, name: &str) -> String {
    let (begin, end) = (format!("// BEGIN {name}"), format!("// END {name}"));
    let mut skipping = false;
    let mut out = String::with_capacity(source.len());
    for line in source.lines() {
        if line == begin {
            skipping = true;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
        if line == end {
            skipping = false;
        }
    }
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
