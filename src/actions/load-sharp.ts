// sharp (libvips) is loaded at the first image rather than at start: loading it costs about 30 MB
// of memory, which a server nobody uploads images or avatars to never needs.
let loaded: Promise<typeof import('sharp').default> | undefined;

export const loadSharp = () => (loaded ??= import('sharp').then((module) => module.default));
