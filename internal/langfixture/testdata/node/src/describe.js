'use strict';

function describe(w, h) {
  const unused = 1;
  return `${w} x ${h}`;
}

module.exports = { describe };
