//! Structs declared once for both languages: `wgsl_struct!` makes the Rust struct and its WGSL
//! declaration from one field list, and `layout::generated` lists them for the shader registry,
//! which appends their declarations to the `wgpu_anim::types` module
//! ([`crate::shaders::types_source`]).
//!
//! Rust's `#[repr(C)]` layout and WGSL's storage layout agree only when every field sits at the
//! alignment WGSL gives it (16 bytes for a `vec4<f32>`, a `vec3<f32>` or an `Affine`: a Rust
//! `Vec3`, of 4-byte alignment, only at a multiple of 16, and followed by a 4-byte field, as WGSL
//! packs it); `tests/shaders.rs` checks each generated struct's size and field offsets against
//! naga's layout, as it does the hand-written structs of `shaders/shared/types.wgsl`.
//!
//! The macro is reachable by path (`crate::layout::wgsl::wgsl_struct`) from the modules whose
//! structs the types module declares but `layout` does not hold (`math`'s `Affine` and
//! `DualQuat`), and from those that declare a shader's struct of their own.

use glam::{Mat4, UVec4, Vec2, Vec3, Vec4};

/// A Rust type with a WGSL twin of the same bytes: its name in WGSL.
pub trait WgslType {
    /// The WGSL type (`f32`, `vec4<f32>`, `array<u32, 3>`, a struct's name).
    fn wgsl_type() -> String;
}

macro_rules! scalar {
    ($($t:ty => $w:literal),*) => {
        $(impl WgslType for $t {
            fn wgsl_type() -> String {
                $w.to_owned()
            }
        })*
    };
}
scalar!(
    f32 => "f32",
    u32 => "u32",
    i32 => "i32",
    Vec2 => "vec2<f32>",
    Vec3 => "vec3<f32>",
    Vec4 => "vec4<f32>",
    UVec4 => "vec4<u32>",
    Mat4 => "mat4x4<f32>"
);

impl<T: WgslType, const N: usize> WgslType for [T; N] {
    fn wgsl_type() -> String {
        format!("array<{}, {N}>", T::wgsl_type())
    }
}

/// A struct made by the crate's `wgsl_struct!` macro: its WGSL name, declaration and field offsets.
pub trait WgslStruct: WgslType + bytemuck::Pod {
    /// The struct's name in WGSL.
    const WGSL_NAME: &'static str;
    /// Its fields in declaration order: the name (a leading `_` dropped, as naga_oil's modules
    /// may not start a name with one) and the Rust type's byte offset.
    fn fields() -> Vec<(&'static str, usize)>;
    /// Its WGSL declaration (`struct Name { field: type, … }`).
    fn declaration() -> String;
}

/// One generated struct, as [`super::generated`] lists it.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The WGSL name.
    pub name: &'static str,
    /// The Rust struct's size in bytes.
    pub size: usize,
    /// Field names (WGSL spelling) and Rust offsets, in declaration order.
    pub fields: Vec<(&'static str, usize)>,
    /// The WGSL declaration.
    pub declaration: String,
}

impl Generated {
    /// The entry of `T`.
    #[must_use]
    pub fn of<T: WgslStruct>() -> Self {
        Self {
            name: T::WGSL_NAME,
            size: size_of::<T>(),
            fields: T::fields(),
            declaration: T::declaration(),
        }
    }
}

/// Declares a struct shared with WGSL once: the Rust struct, `#[repr(C)]` with the attributes
/// and visibility given (derive `Clone, Copy, bytemuck::Pod, bytemuck::Zeroable` at least), and
/// its [`WgslStruct`] implementation. Every field's type must implement [`WgslType`]. List the
/// struct in `layout::generated` so that the shaders see it (or, for a shader's own struct,
/// prepend its [`WgslStruct::declaration`] to that shader).
///
/// Names follow naga_oil's rules for a composable module: no field's name ends in a digit
/// (`_pad_b`, not `_pad1`), and a leading `_` is dropped in WGSL.
///
/// ```ignore
/// wgsl_struct! {
///     /// What a pass keeps per character.
///     #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
///     pub struct GpuExample as "Example" {
///         /// A weight.
///         pub weight: f32,
///         /// Padding to 16 bytes.
///         pub _pad: [u32; 3],
///     }
/// }
/// ```
macro_rules! wgsl_struct {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident as $wgsl:literal {
            $( $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        $vis struct $name {
            $( $(#[$fmeta])* $fvis $field: $ty ),*
        }

        impl $crate::layout::wgsl::WgslType for $name {
            fn wgsl_type() -> String {
                $wgsl.to_owned()
            }
        }

        impl $crate::layout::wgsl::WgslStruct for $name {
            const WGSL_NAME: &'static str = $wgsl;

            fn fields() -> Vec<(&'static str, usize)> {
                vec![$((stringify!($field).trim_start_matches('_'), std::mem::offset_of!($name, $field))),*]
            }

            fn declaration() -> String {
                let mut out = format!("struct {} {{\n", $wgsl);
                $(out.push_str(&format!(
                    "    {}: {},\n",
                    stringify!($field).trim_start_matches('_'),
                    <$ty as $crate::layout::wgsl::WgslType>::wgsl_type()
                ));)*
                out.push_str("}\n");
                out
            }
        }
    };
}
pub(crate) use wgsl_struct;
