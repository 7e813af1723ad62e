//! Errors. Every error names what is wrong and where: the skeleton, clip, joint, track or instance.

/// Which channel of a joint track.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// Translation keys.
    Translation,
    /// Rotation keys.
    Rotation,
    /// Scale keys.
    Scale,
}

impl Channel {
    /// The channel's place among a joint's three tracks: translation 0, rotation 1, scale 2.
    #[must_use]
    pub fn index(self) -> u32 {
        match self {
            Channel::Translation => 0,
            Channel::Rotation => 1,
            Channel::Scale => 2,
        }
    }
}

impl std::fmt::Display for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Channel::Translation => "translation",
            Channel::Rotation => "rotation",
            Channel::Scale => "scale",
        })
    }
}

/// Everything that can go wrong in this crate. No public function panics on user input; it returns
/// one of these instead, and leaves its target unchanged. `#[non_exhaustive]`: each new check may
/// add a variant, so a `match` on it needs a `_` arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A skeleton failed validation.
    #[error("skeleton '{skeleton}': joint {joint} ('{joint_name}'): {what}")]
    Skeleton {
        /// Skeleton name.
        skeleton: String,
        /// Joint index, in the order given.
        joint: usize,
        /// Joint name.
        joint_name: String,
        /// What is wrong.
        what: String,
    },
    /// A skeleton as a whole is unusable (empty, too many joints, a cycle).
    #[error("skeleton '{skeleton}': {what}")]
    SkeletonShape {
        /// Skeleton name.
        skeleton: String,
        /// What is wrong.
        what: String,
    },
    /// A clip failed validation.
    #[error("clip '{clip}': {what}")]
    Clip {
        /// Clip name.
        clip: String,
        /// What is wrong.
        what: String,
    },
    /// A track of a clip failed validation.
    #[error("clip '{clip}', joint '{joint}', {channel} track: {what}")]
    Track {
        /// Clip name.
        clip: String,
        /// Joint name.
        joint: String,
        /// The channel.
        channel: Channel,
        /// What is wrong.
        what: String,
    },
    /// A mesh failed validation.
    #[error("mesh '{mesh}': {what}")]
    Mesh {
        /// Mesh name.
        mesh: String,
        /// What is wrong.
        what: String,
    },
    /// An instance names something that does not exist or has bad parameters.
    #[error("instance {instance}: {what}")]
    Instance {
        /// Instance index.
        instance: usize,
        /// What is wrong.
        what: String,
    },
    /// A blend tree failed validation; `what` names the node (its index in the authored tree).
    #[error("blend tree '{tree}': {what}")]
    Blend {
        /// Tree name.
        tree: String,
        /// What is wrong.
        what: String,
    },
    /// A state machine was refused when added to a library: `at` names the transition (its index
    /// and states), state or parameter, `what` what is wrong.
    #[error("state machine '{machine}', {at}: {what}")]
    Machine {
        /// The machine's name.
        machine: String,
        /// Where: `transition 3 (idle -> walk)`, `state 'run'`, `parameter 'speed'`.
        at: String,
        /// What is wrong.
        what: String,
    },
    /// A retargeting setup was refused ([`crate::offline::retarget`]): `what` names the joints of
    /// the bone map or rest override at fault.
    #[error("retargeting '{from}' onto '{to}': {what}")]
    Retarget {
        /// The source skeleton's name.
        from: String,
        /// The target skeleton's name.
        to: String,
        /// What is wrong.
        what: String,
    },
    /// A capacity or device limit would be exceeded.
    #[error("limit exceeded: {what}")]
    Limit {
        /// What limit, and by how much.
        what: String,
    },
    /// No suitable GPU adapter or device.
    #[error("no GPU device: {0}")]
    Device(String),
    /// The device refused to create a buffer, shader or pipeline (a validation error or out of
    /// memory, caught in an error scope instead of wgpu's uncaptured-error handler).
    #[error("the device refused {what}: {reason}")]
    Refused {
        /// What was being created.
        what: String,
        /// The device's error.
        reason: String,
    },
    /// Something of yours that the library binds or draws with does not fit what it binds: a
    /// bind group entry, a buffer, bind groups of another animator (checked on the CPU before
    /// anything is created; what only the device can check comes back as [`Error::Refused`]).
    #[error("{what}: {reason}")]
    Binding {
        /// What was being made or drawn (a bind group of a page, a draw).
        what: String,
        /// What is wrong, naming the binding, entry or buffer.
        reason: String,
    },
    /// A mesh asked to draw instances of another skeleton than the one it was uploaded for
    /// ([`crate::gpu::MeshBuffers::new`]): its vertices name joints of its own skeleton, and
    /// another's palette would skin them with the wrong joints. "mesh 'fox' is skinned to
    /// skeleton 'fox' (0) and cannot draw instance 3, of skeleton 'mannequin' (1)"; when the mesh
    /// was uploaded for another build of the animator's library, each skeleton is named with its
    /// library ("'fox' (0, library 7)").
    #[error(
        "mesh '{mesh}' is skinned to skeleton {skeleton} and cannot draw instance {instance}, of skeleton {instance_skeleton}"
    )]
    MeshSkeleton {
        /// The mesh's name.
        mesh: String,
        /// The mesh's skeleton: its name and index in its library.
        skeleton: String,
        /// The first instance asked for whose skeleton is another.
        instance: usize,
        /// That instance's skeleton, named as `skeleton` is.
        instance_skeleton: String,
    },
    /// An animator's passes encoded, or its characters drawn, before its first
    /// [`crate::Animator::prepare`]: no instance is on the GPU yet, so nothing would be animated
    /// or drawn. "Animator::encode: no frame has been prepared yet (call Animator::prepare
    /// first: it uploads the instances and the frame)".
    #[error(
        "{what}: no frame has been prepared yet (call Animator::prepare first: it uploads the instances and the frame)"
    )]
    NotPrepared {
        /// What was called: "Animator::encode", "SkinBinding::draw of instances 0..4".
        what: String,
    },
    /// Instances drawn that were added after the animator's last [`crate::Animator::prepare`]:
    /// their state is not on the GPU yet, so their draw would show another character's pose or
    /// none. "SkinBinding::draw of instances 0..12: instances 10..12 were added after the last
    /// Animator::prepare (it uploads them)".
    #[error("{what}: instances {prepared}..{end} were added after the last Animator::prepare (it uploads them)")]
    NotUploaded {
        /// What was called, with the instances asked for.
        what: String,
        /// Instances the last `prepare` uploaded.
        prepared: usize,
        /// The end of the instances asked for.
        end: usize,
    },
    /// An animator could not be rebuilt on a new device ([`crate::Animator::rebuild`]).
    #[error("cannot rebuild the animator: {what}")]
    Recovery {
        /// Why not.
        what: String,
    },
    /// An id from another library (or from before the library was built again) was given to
    /// this one: "clip 3 belongs to another library (library 7), not this one (library 9)".
    #[error("{0}")]
    ForeignId(#[from] crate::id::ForeignId),
    /// An asset file could not be read or is malformed.
    #[error("{file}: {what}")]
    Asset {
        /// The file.
        file: String,
        /// What is wrong.
        what: String,
    },
}

/// Shorthand for this crate's results.
pub type Result<T> = std::result::Result<T, Error>;
