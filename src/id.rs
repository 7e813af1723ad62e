//! Ids a library hands out — [`SkeletonId`], [`ClipId`], [`BlendTreeId`], [`MaskId`] — each
//! carrying the [`LibraryTag`] of the library that issued it, so that an id from another library
//! (or from before a rebuild) is refused with an error ([`ForeignId`]) instead of playing whatever
//! has its index in this one.
//!
//! The tag lives on the CPU only: GPU structs ([`crate::layout`]) hold plain indices
//! ([`ClipId::index`]). A [`crate::LibraryBuilder`] takes a new tag when it is made, so every
//! library built has a tag of its own, even one built again from the same input. A clone of a
//! built [`crate::AnimationLibrary`] keeps its tag (its contents are the same and read-only).
//!
//! Ids are made by the builder's `add_*` methods, looked up by name
//! ([`crate::AnimationLibrary::clip_id`], [`crate::AnimationLibrary::mask_id`],
//! [`crate::blend::BlendLibrary::tree_id`]) or, for tools and tests, by index
//! ([`crate::AnimationLibrary::clip_at`], `skeleton_at`, `mask_at`,
//! [`crate::blend::BlendLibrary::tree_at`]).

use std::sync::atomic::{AtomicU32, Ordering};

/// Which library issued an id: a number unique in the process (shown as `library 7`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LibraryTag(u32);

/// The next tag to give out.
static NEXT_TAG: AtomicU32 = AtomicU32::new(1);

impl LibraryTag {
    /// A tag no library of this process has had (4 billion of them before one repeats).
    #[must_use]
    pub fn new() -> Self {
        Self(NEXT_TAG.fetch_add(1, Ordering::Relaxed))
    }

    /// Its number, as error messages show it.
    #[must_use]
    pub const fn get(self) -> u32 {
        self.0
    }
}

/// A new tag ([`LibraryTag::new`]).
impl Default for LibraryTag {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Display for LibraryTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "library {}", self.0)
    }
}

/// The kinds of id a library hands out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdKind {
    /// [`SkeletonId`].
    Skeleton,
    /// [`ClipId`].
    Clip,
    /// [`BlendTreeId`] (a blend tree or blend space).
    BlendTree,
    /// [`MaskId`].
    Mask,
    /// [`MachineId`].
    Machine,
}

impl std::fmt::Display for IdKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IdKind::Skeleton => "skeleton",
            IdKind::Clip => "clip",
            IdKind::BlendTree => "blend tree",
            IdKind::Mask => "mask",
            IdKind::Machine => "state machine",
        })
    }
}

/// An id given to a library that did not issue it ([`crate::Error::ForeignId`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ForeignId {
    /// What kind of id.
    pub kind: IdKind,
    /// Its index in the library that issued it.
    pub index: u32,
    /// The library that issued it.
    pub issuer: LibraryTag,
    /// The library it was given to.
    pub library: LibraryTag,
}

impl std::fmt::Display for ForeignId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} belongs to another library ({}), not this one ({})",
            self.kind, self.index, self.issuer, self.library
        )
    }
}

impl std::error::Error for ForeignId {}

/// Defines an id type: an index and the tag of the library that issued it.
macro_rules! library_id {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        ///
        /// `Copy`, 8 bytes: its index in the library's arrays and the library's [`LibraryTag`].
        /// Only its library makes one (see [the module docs](crate::id)); every function that
        /// takes one refuses one from another library with [`crate::Error::ForeignId`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name {
            index: u32,
            library: LibraryTag,
        }

        impl $name {
            /// The id of entry `index` of the library tagged `library` (the caller knows it exists).
            pub(crate) const fn new(index: u32, library: LibraryTag) -> Self {
                Self { index, library }
            }

            /// Its index in its library's arrays: what GPU structs hold.
            #[must_use]
            pub const fn index(self) -> u32 {
                self.index
            }

            /// The library that issued it.
            #[must_use]
            pub const fn library(self) -> LibraryTag {
                self.library
            }

            /// Its index when `library` issued it; otherwise what is wrong.
            ///
            /// # Errors
            ///
            /// [`ForeignId`] when another library issued it.
            pub fn check(self, library: LibraryTag) -> Result<u32, ForeignId> {
                if self.library == library {
                    Ok(self.index)
                } else {
                    Err(ForeignId {
                        kind: $kind,
                        index: self.index,
                        issuer: self.library,
                        library,
                    })
                }
            }
        }

        /// `clip 3 of library 7` (for a [`ClipId`]; likewise the others).
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{} {} of {}", $kind, self.index, self.library)
            }
        }
    };
}

library_id!(
    /// A skeleton of an [`crate::AnimationLibrary`].
    SkeletonId,
    IdKind::Skeleton
);
library_id!(
    /// A clip of an [`crate::AnimationLibrary`].
    ClipId,
    IdKind::Clip
);
library_id!(
    /// A blend tree (or blend space) of a library's [`crate::blend::BlendLibrary`].
    BlendTreeId,
    IdKind::BlendTree
);
library_id!(
    /// A mask (per-joint layer weights) of an [`crate::AnimationLibrary`].
    MaskId,
    IdKind::Mask
);

library_id!(
    /// A state machine of an [`crate::AnimationLibrary`] ([`crate::machine`]).
    MachineId,
    IdKind::Machine
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_small_and_name_themselves_and_their_library() {
        assert_eq!(size_of::<ClipId>(), 8);
        let (a, b) = (LibraryTag::new(), LibraryTag::new());
        assert_ne!(a, b);
        let clip = ClipId::new(3, a);
        assert_eq!(clip.check(a), Ok(3));
        let e = clip.check(b).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "clip 3 belongs to another library (library {}), not this one (library {})",
                a.get(),
                b.get()
            )
        );
        assert_eq!(MaskId::new(1, a).to_string(), format!("mask 1 of library {}", a.get()));
    }
}
