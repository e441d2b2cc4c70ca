export * from './common';
export * from './instruments';
export * from './session';
export * from './requests';
export * from './responses';
export * from './webhook';
export * from './validation';
