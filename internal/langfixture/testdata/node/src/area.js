'use strict';

function area(w, h) {
  return w * h;
}

module.exports = { area };
